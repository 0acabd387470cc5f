//! The per-I/O model of an EBS volume, the same arithmetic as `storagebench.agent.twin.model`.
//!
//! The Python module is the model's one definition; this is its port for the compiled data path.
//! `tests/data/twin/model-table.json` (written from the Python model by
//! `scripts/twin_model_table.py`) holds traces of I/Os with the start and service time of each,
//! the counters and the burst events; `storagebench-twin replay` must reproduce every figure, and
//! a unit test runs it. Change one side and the table, or the other side, fails.

use serde_json::{Map, Value};

pub const MIB: u64 = 1 << 20;
pub const KIB: u64 = 1 << 10;
const Z99: f64 = 2.3263478740408408;
/// Credits needed to leave baseline again (avoids flapping at the knee).
pub const RESTORE_SHARE: f64 = 0.05;
/// Slots of rate a late arrival may catch up on (model.PACING_SLOTS).
pub const PACING_SLOTS: f64 = 2.0;
/// A reply this late means the twin itself could not run (model.STALL_S).
pub const STALL_S: f64 = 0.005;
/// The most of a stall the buckets may catch up on (model.STALL_CREDIT_CAP_S).
const STALL_CREDIT_CAP_S: f64 = 0.25;

#[derive(Debug)]
pub struct ModelError(pub String);

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(message: String) -> Result<T, ModelError> {
    Err(ModelError(message))
}

/// SplitMix64: the uniform draws both implementations share (model.Uniform).
pub struct Uniform {
    state: u64,
}

impl Uniform {
    pub fn new(seed: u64) -> Self {
        Uniform { state: seed }
    }

    /// A float in (0, 1): never 0 or 1, so a quantile always exists.
    pub fn next(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 11) as f64 + 0.5) / 9_007_199_254_740_992.0
    }
}

struct Mode {
    mu: f64,
    sigma: f64,
}

/// A mixture of lognormal modes, drawn by inverse CDF from the shared uniform stream.
pub struct ServiceTime {
    modes: Vec<Mode>,
    cumulative: Vec<f64>,
    uniform: Uniform,
}

fn number(path: &str, value: &Value, expected: &str) -> Result<f64, ModelError> {
    match value.as_f64() {
        Some(v) if !v.is_nan() && !value.is_boolean() => Ok(v),
        _ => err(format!("{path}: {value}, {expected}")),
    }
}

impl ServiceTime {
    pub fn from_spec(spec: &Value, seed: u64) -> Result<Self, ModelError> {
        let object = match spec.as_object() {
            Some(o) => o,
            None => return err(format!("latency: {spec}, an object with modes expected")),
        };
        let raw = match object.get("modes").and_then(Value::as_array) {
            Some(list) if !list.is_empty() => list,
            other => {
                let shown =
                    other.map_or("None".to_string(), |l| Value::Array(l.clone()).to_string());
                return err(format!(
                    "latency.modes: {shown}, a non-empty list of modes expected"
                ));
            }
        };
        let mut weighted = Vec::new();
        for (index, item) in raw.iter().enumerate() {
            let path = format!("latency.modes[{index}]");
            let mode = match item.as_object() {
                Some(m) => m,
                None => return err(format!("{path}: {item}, an object expected")),
            };
            for key in ["p50_ms", "p99_ms"] {
                if !mode.contains_key(key) {
                    return err(format!(
                        "{path}: {key} missing, p50_ms and p99_ms numbers expected"
                    ));
                }
            }
            let weight = match mode.get("weight") {
                None => 1.0,
                Some(w) => number(&format!("{path}.weight"), w, "a positive number expected")?,
            };
            if weight.is_nan() || weight <= 0.0 {
                return err(format!(
                    "{path}.weight: {}, a positive number expected",
                    mode["weight"]
                ));
            }
            let p50 = number(
                &format!("{path}.p50_ms"),
                &mode["p50_ms"],
                "a number expected",
            )?;
            let p99 = number(
                &format!("{path}.p99_ms"),
                &mode["p99_ms"],
                "a number expected",
            )?;
            if !(0.0 < p50 && p50 <= p99) {
                return err(format!(
                    "{path}: p50_ms {}, p99_ms {}: 0 < p50_ms <= p99_ms expected",
                    mode["p50_ms"], mode["p99_ms"]
                ));
            }
            let (p50_s, p99_s) = (p50 / 1000.0, p99 / 1000.0);
            weighted.push((
                weight,
                Mode {
                    mu: p50_s.ln(),
                    sigma: (p99_s / p50_s).ln() / Z99,
                },
            ));
        }
        let total: f64 = weighted.iter().map(|(w, _)| *w).sum();
        let mut running = 0.0;
        let mut cumulative = Vec::new();
        let mut modes = Vec::new();
        for (weight, mode) in weighted {
            running += weight / total;
            cumulative.push(running);
            modes.push(mode);
        }
        Ok(ServiceTime {
            modes,
            cumulative,
            uniform: Uniform::new(seed),
        })
    }

    /// One service time in seconds: a mode by its weight, then that lognormal's quantile.
    pub fn sample(&mut self) -> f64 {
        let pick = self.uniform.next();
        let mut chosen = self.modes.len() - 1;
        for (index, edge) in self.cumulative.iter().enumerate() {
            if pick <= *edge {
                chosen = index;
                break;
            }
        }
        let mode = &self.modes[chosen];
        (mode.mu + mode.sigma * normal_quantile(self.uniform.next())).exp()
    }
}

/// A volume's ceilings and accounting, read from the plan's `EmulationLimits`.
pub struct Limits {
    pub iops: f64,
    pub mibps: f64,
    pub burst_iops: f64,
    pub burst_mibps: f64,
    pub unit: u64,
    pub credit_capacity: f64,
    pub credit_refill: f64,
    pub credit_in_mib: bool,
    pub hdd: bool,
    pub pacing_slots: f64,
}

impl Limits {
    pub fn from_spec(spec: &Value) -> Result<Self, ModelError> {
        let empty = Map::new();
        let object = spec.as_object().unwrap_or(&empty);
        let get = |key: &str, default: Option<f64>, positive: bool| -> Result<f64, ModelError> {
            let expected = if positive {
                "a positive number expected"
            } else {
                "a number >= 0 expected"
            };
            let value = match object.get(key) {
                None | Some(Value::Null) => match default {
                    Some(d) => return Ok(d),
                    None => {
                        return err(format!("limits.{key}: missing, a positive number expected"))
                    }
                },
                Some(v) => v,
            };
            let result = number(&format!("limits.{key}"), value, expected)?;
            if !(if positive {
                result > 0.0
            } else {
                result >= 0.0
            }) {
                return err(format!("limits.{key}: {value}, {expected}"));
            }
            Ok(result)
        };
        let iops = get("iops", None, true)?;
        let mibps = get("mibps", None, true)?;
        let burst_iops = get("burst_iops", Some(iops), true)?;
        let burst_mibps = get("burst_mibps", Some(mibps), true)?;
        let io_size_kib = get("io_size_kib", Some(256.0), true)?;
        if io_size_kib != io_size_kib.trunc() {
            return err(format!(
                "limits.io_size_kib: {}, a whole number of KiB expected",
                object.get("io_size_kib").cloned().unwrap_or(Value::Null)
            ));
        }
        let unit = io_size_kib as u64 * KIB;
        let credit_capacity = get("credit_capacity", Some(0.0), false)?;
        let credit_refill = get("credit_refill_per_s", Some(0.0), false)?;
        let pacing_slots = get("pacing_slots", Some(PACING_SLOTS), false)?;
        let credit_in_mib = match object.get("credit_unit") {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) if s == "io" => false,
            Some(Value::String(s)) if s == "mib" => true,
            Some(other) => {
                return err(format!(
                    "limits.credit_unit: {other}, 'io' or 'mib' expected"
                ))
            }
        };
        Ok(Limits {
            iops,
            mibps,
            burst_iops,
            burst_mibps,
            unit,
            credit_capacity,
            credit_refill,
            credit_in_mib,
            hdd: unit >= MIB,
            pacing_slots,
        })
    }
}

pub struct Event {
    pub at: f64,
    pub name: &'static str,
    pub credits: f64,
    pub iops: f64,
    pub mibps: f64,
}

/// The state that orders I/Os: paced buckets, the merge window and the credit balance.
pub struct Admission {
    pub limits: Limits,
    ops_free_at: f64,
    bytes_free_at: f64,
    merge_end: i64,
    merge_write: bool,
    merge_fill: u64,
    pub credits: f64,
    pub bursting: bool,
    credit_clock: Option<f64>,
    pub events: Vec<Event>,
    pub operations: u64,
    pub ios: u64,
    pub bytes: u64,
    stall_credit: f64,
}

impl Admission {
    pub fn new(limits: Limits) -> Self {
        let credits = limits.credit_capacity;
        Admission {
            bursting: credits > 0.0,
            limits,
            ops_free_at: 0.0,
            bytes_free_at: 0.0,
            merge_end: -1,
            merge_write: false,
            merge_fill: 0,
            credits,
            credit_clock: None,
            events: Vec::new(),
            operations: 0,
            ios: 0,
            bytes: 0,
            stall_credit: 0.0,
        }
    }

    pub fn ceilings(&self) -> (f64, f64) {
        if self.bursting {
            (self.limits.burst_iops, self.limits.burst_mibps)
        } else {
            (self.limits.iops, self.limits.mibps)
        }
    }

    /// Operations and bytes this I/O is charged, updating the merge window.
    fn cost(&mut self, offset: u64, length: u64, write: bool) -> (u64, u64) {
        let unit = self.limits.unit;
        let mut operations = 0;
        let mut remaining = length;
        if offset as i64 == self.merge_end && write == self.merge_write && self.merge_fill < unit {
            let taken = (unit - self.merge_fill).min(remaining);
            remaining -= taken;
            self.merge_fill += taken;
        }
        if remaining > 0 {
            operations = remaining.div_ceil(unit);
            self.merge_fill = remaining - (operations - 1) * unit;
        }
        self.merge_end = (offset + length) as i64;
        self.merge_write = write;
        let charged = if !self.limits.hdd {
            length
        } else if operations == 0 {
            0
        } else {
            operations * unit
        };
        (operations, charged)
    }

    fn spend(&mut self, now: f64, operations: u64, charged: u64) {
        let capacity = self.limits.credit_capacity;
        if capacity <= 0.0 {
            return;
        }
        if let Some(clock) = self.credit_clock {
            self.credits = capacity.min(self.credits + self.limits.credit_refill * (now - clock));
        }
        self.credit_clock = Some(now);
        let spent = if self.limits.credit_in_mib {
            charged as f64 / MIB as f64
        } else {
            operations as f64
        };
        self.credits = (self.credits - spent).max(0.0);
        if self.bursting && self.credits <= 0.0 {
            self.bursting = false;
            self.event(now, "burst-exhausted");
        } else if !self.bursting && self.credits >= RESTORE_SHARE * capacity {
            self.bursting = true;
            self.event(now, "burst-restored");
        }
    }

    fn event(&mut self, at: f64, name: &'static str) {
        let (iops, mibps) = self.ceilings();
        self.events.push(Event {
            at,
            name,
            credits: self.credits,
            iops,
            mibps,
        });
    }

    /// The twin could not run for `seconds`: the buckets may catch up on as much (model.forgive).
    pub fn forgive(&mut self, seconds: f64) {
        if seconds > 0.0 {
            self.stall_credit = STALL_CREDIT_CAP_S.min(self.stall_credit + seconds);
        }
    }

    /// When this I/O, arriving at `now`, has its last unit start being served (>= now): an I/O
    /// of several units is served unit by unit at the volume's pace (model.py's admit).
    ///
    /// Each bucket is a GCRA: a bucket may lag `pacing_slots` of its own slots behind the
    /// clock, so an I/O that reaches the twin late (the twin or the client woke late) is
    /// caught up on instead of its slot being lost for good, while the rate over any window
    /// longer than those slots stays the limit.
    pub fn admit(&mut self, now: f64, offset: u64, length: u64, write: bool) -> f64 {
        let (operations, charged) = self.cost(offset, length, write);
        self.ios += 1;
        self.operations += operations;
        self.bytes += length;
        self.spend(now, operations, charged);
        let (iops, mibps) = self.ceilings();
        let slots = self.limits.pacing_slots;
        let bytes_rate = mibps * MIB as f64;
        let ops_base = slots / iops;
        let bytes_base = slots * self.limits.unit as f64 / bytes_rate;
        let ops_tolerance = ops_base + self.stall_credit;
        let bytes_tolerance = bytes_base + self.stall_credit;
        let mut start = now;
        let mut ops_ready = self.ops_free_at;
        let mut bytes_ready = self.bytes_free_at;
        if operations > 0 {
            ops_ready = ops_ready.max(now - ops_tolerance);
            start = start.max(ops_ready);
        }
        if charged > 0 {
            bytes_ready = bytes_ready.max(now - bytes_tolerance);
            start = start.max(bytes_ready);
        }
        if operations > 0 {
            self.ops_free_at = ops_ready.max(start - ops_tolerance) + operations as f64 / iops;
        }
        if charged > 0 {
            self.bytes_free_at =
                bytes_ready.max(start - bytes_tolerance) + charged as f64 / bytes_rate;
        }
        if self.stall_credit != 0.0 {
            let lag =
                (now - ops_base - self.ops_free_at).max(now - bytes_base - self.bytes_free_at);
            self.stall_credit = self.stall_credit.min(lag).max(0.0);
        }
        if operations > 1 {
            start +=
                (operations - 1) as f64 * (1.0 / iops).max(self.limits.unit as f64 / bytes_rate);
        }
        start
    }

    /// The earliest a new I/O charged on both buckets could start: until then an arrival's
    /// exact arrival time cannot change its admission.
    pub fn busy_until(&self) -> f64 {
        self.ops_free_at
    }
}

/// Admission plus service time.
pub struct VolumeModel {
    pub admission: Admission,
    pub service: ServiceTime,
}

impl VolumeModel {
    pub fn from_spec(spec: &Value, seed: u64) -> Result<Self, ModelError> {
        let limits = match spec.get("limits") {
            Some(l) if l.is_object() => l,
            other => {
                let shown = other.map_or("None".to_string(), Value::to_string);
                return err(format!("limits: {shown}, an object expected"));
            }
        };
        let latency = spec.get("latency").unwrap_or(&Value::Null);
        let admission = Admission::new(Limits::from_spec(limits)?);
        let service = ServiceTime::from_spec(latency, seed)?;
        Ok(VolumeModel { admission, service })
    }
}

/// Inverse standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9), as in Python.
pub fn normal_quantile(q: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e01,
        2.209460984245205e02,
        -2.759285104469687e02,
        1.38357751867269e02,
        -3.066479806614716e01,
        2.506628277459239e00,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e01,
        1.615858368580409e02,
        -1.556989798598866e02,
        6.680131188771972e01,
        -1.328068155288572e01,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e00,
        -2.549732539343734e00,
        4.374664141464968e00,
        2.938163982698783e00,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-03,
        3.224671290700398e-01,
        2.445134137142996e00,
        3.754408661907416e00,
    ];
    let low = 0.02425;
    if q < low {
        let r = (-2.0 * q.ln()).sqrt();
        return (((((C[0] * r + C[1]) * r + C[2]) * r + C[3]) * r + C[4]) * r + C[5])
            / ((((D[0] * r + D[1]) * r + D[2]) * r + D[3]) * r + 1.0);
    }
    if q > 1.0 - low {
        let r = (-2.0 * (1.0 - q).ln()).sqrt();
        return -(((((C[0] * r + C[1]) * r + C[2]) * r + C[3]) * r + C[4]) * r + C[5])
            / ((((D[0] * r + D[1]) * r + D[2]) * r + D[3]) * r + 1.0);
    }
    let r = q - 0.5;
    let s = r * r;
    (((((A[0] * s + A[1]) * s + A[2]) * s + A[3]) * s + A[4]) * s + A[5]) * r
        / (((((B[0] * s + B[1]) * s + B[2]) * s + B[3]) * s + B[4]) * s + 1.0)
}
