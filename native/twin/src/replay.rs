//! `storagebench-twin replay`: the model alone, on a trace of I/Os, for the shared table.

use std::io::Read;
use std::process::ExitCode;

use serde_json::{json, Value};

use crate::model::VolumeModel;

fn run(document: &Value) -> Result<Value, String> {
    let spec = document.get("spec").ok_or("spec: missing")?;
    let seed = document
        .get("seed")
        .and_then(Value::as_u64)
        .ok_or("seed: a whole number expected")?;
    let overhead = document
        .get("overhead_s")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let mut model = VolumeModel::from_spec(spec, seed).map_err(|e| e.0)?;
    let ios = document
        .get("ios")
        .and_then(Value::as_array)
        .ok_or("ios: a list expected")?;
    let (mut starts, mut services) = (Vec::new(), Vec::new());
    for (index, io) in ios.iter().enumerate() {
        let fields = io
            .as_array()
            .filter(|f| f.len() == 4 || f.len() == 5)
            .ok_or(format!(
                "ios[{index}]: [now, offset, length, write(, stall_s)] expected"
            ))?;
        let now = fields[0]
            .as_f64()
            .ok_or(format!("ios[{index}][0]: a number expected"))?;
        let offset = fields[1]
            .as_u64()
            .ok_or(format!("ios[{index}][1]: a whole number expected"))?;
        let length = fields[2]
            .as_u64()
            .ok_or(format!("ios[{index}][2]: a whole number expected"))?;
        let write = fields[3]
            .as_bool()
            .ok_or(format!("ios[{index}][3]: true or false expected"))?;
        if let Some(stall) = fields.get(4) {
            let seconds = stall
                .as_f64()
                .ok_or(format!("ios[{index}][4]: a number expected"))?;
            model.admission.forgive(seconds);
        }
        starts.push(model.admission.admit(now, offset, length, write));
        services.push((model.service.sample() - overhead).max(0.0));
    }
    let a = &model.admission;
    let events: Vec<Value> = a
        .events
        .iter()
        .map(|e| json!([e.at, e.name, e.credits, e.iops, e.mibps]))
        .collect();
    Ok(json!({
        "starts": starts,
        "services": services,
        "ios": a.ios,
        "operations": a.operations,
        "bytes": a.bytes,
        "credits": a.credits,
        "events": events,
    }))
}

pub fn main() -> ExitCode {
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        eprintln!("error stdin: {e}");
        return ExitCode::from(2);
    }
    let document: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error stdin: not JSON: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&document) {
        Ok(answer) => {
            println!("{answer}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            println!("{}", json!({ "error": message }));
            ExitCode::from(2)
        }
    }
}
