"""The results store on one DynamoDB table, one module per access pattern (see ``adapters.aws.dynamodb``)."""
