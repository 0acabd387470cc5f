"""The results store's key design (pure); adapters implement it on DynamoDB."""
