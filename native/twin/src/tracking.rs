//! The host's own I/O path, followed while it runs instead of timed once at start-up.
//!
//! Calibration times QD1 reads through the loop device while the twin answers a known delay: what
//! they take beyond it is this machine's path (block layer, loop worker, FUSE, the client's
//! wake-ups), which the twin takes off every service time so the client sees the model's latency.
//! On a busy machine that path grows with the load, and a start-up figure leaves every QD1 latency
//! too high by the difference (+20-50 µs on 0.35 ms beside a CPU hog, measured).
//!
//! What the twin itself sees of the path is the turnaround: from a reply, with nothing else in
//! flight, to the next request. The calibration records its median beside the client's figure;
//! while tracking is on (the agent turns it on for fio phases without think times or rate
//! limits, whose pauses would read as path), the path in use is the calibrated one moved by how
//! far the current median turnaround has moved, within bounds.

const WINDOW: usize = 256;
const MIN_SAMPLES: usize = 64;
/// A turnaround longer than this is the client pausing, not the path.
const MAX_TURNAROUND_S: f64 = 0.005;
/// The tracked path never moves further than this above the calibrated one.
const MAX_RISE_S: f64 = 0.0005;

#[derive(Default)]
pub struct PathTracker {
    samples: Vec<f64>,
    next: usize,
    calibrated_turnaround: Option<f64>,
    pub on: bool,
    current: Option<f64>,
    since_update: usize,
    used_min: f64,
    used_max: f64,
    pub updates: u64,
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

impl PathTracker {
    /// A turnaround: a request arriving `seconds` after a reply left with nothing in flight.
    pub fn sample(&mut self, seconds: f64) {
        if !(0.0..MAX_TURNAROUND_S).contains(&seconds) {
            return;
        }
        if self.samples.len() < WINDOW {
            self.samples.push(seconds);
        } else {
            self.samples[self.next] = seconds;
            self.next = (self.next + 1) % WINDOW;
        }
        self.since_update += 1;
    }

    /// The calibration is done: its turnarounds are the reference, and a fresh window starts.
    pub fn calibrated(&mut self) {
        if self.samples.len() >= MIN_SAMPLES {
            self.calibrated_turnaround = Some(median(&self.samples));
        }
        self.samples.clear();
        self.next = 0;
        self.current = None;
    }

    pub fn switch(&mut self, on: bool) {
        self.on = on;
        self.samples.clear();
        self.next = 0;
        self.current = None;
        self.since_update = 0;
    }

    /// The path to take off a service time: the calibrated `overhead`, moved by the turnaround's
    /// drift while tracking is on and enough turnarounds were seen.
    pub fn overhead(&mut self, overhead: f64) -> f64 {
        let Some(reference) = self.calibrated_turnaround else {
            return overhead;
        };
        if !self.on || self.samples.len() < MIN_SAMPLES {
            return overhead;
        }
        if self.current.is_none() || self.since_update >= MIN_SAMPLES {
            let moved = (median(&self.samples) - reference).clamp(-overhead, MAX_RISE_S);
            let used = overhead + moved;
            self.current = Some(used);
            self.since_update = 0;
            self.updates += 1;
            self.used_min = if self.updates == 1 {
                used
            } else {
                self.used_min.min(used)
            };
            self.used_max = self.used_max.max(used);
        }
        self.current.unwrap_or(overhead)
    }

    pub fn summary(&self) -> serde_json::Value {
        serde_json::json!({
            "calibrated_turnaround_us": self.calibrated_turnaround.map(|t| (t * 1e7).round() / 10.0),
            "updates": self.updates,
            "overhead_used_min_us": if self.updates > 0 { Some((self.used_min * 1e7).round() / 10.0) } else { None },
            "overhead_used_max_us": if self.updates > 0 { Some((self.used_max * 1e7).round() / 10.0) } else { None },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(values: &[f64]) -> PathTracker {
        let mut tracker = PathTracker::default();
        for v in values {
            tracker.sample(*v);
        }
        tracker
    }

    #[test]
    fn without_a_calibrated_reference_the_overhead_is_the_calibrated_one() {
        let mut tracker = fed(&[0.0001; 100]);
        tracker.switch(true);
        assert_eq!(tracker.overhead(0.00003), 0.00003);
    }

    #[test]
    fn a_slower_path_raises_the_overhead_by_the_turnarounds_drift_within_bounds() {
        let mut tracker = fed(&[0.00010; 100]);
        tracker.calibrated();
        tracker.switch(true);
        for _ in 0..100 {
            tracker.sample(0.00014);
        }
        assert!((tracker.overhead(0.00003) - 0.00007).abs() < 1e-12);
        tracker.switch(true);
        for _ in 0..100 {
            tracker.sample(0.004); // a client pausing reads as at most MAX_RISE_S
        }
        assert!((tracker.overhead(0.00003) - (0.00003 + MAX_RISE_S)).abs() < 1e-12);
        tracker.switch(false);
        assert_eq!(tracker.overhead(0.00003), 0.00003);
    }

    #[test]
    fn pauses_longer_than_a_path_are_not_samples() {
        let mut tracker = fed(&[0.00010; 100]);
        tracker.calibrated();
        tracker.switch(true);
        for _ in 0..100 {
            tracker.sample(0.2);
        }
        assert_eq!(tracker.overhead(0.00003), 0.00003);
    }

    #[test]
    fn a_faster_path_lowers_it_but_never_below_zero() {
        let mut tracker = fed(&[0.00010; 100]);
        tracker.calibrated();
        tracker.switch(true);
        for _ in 0..100 {
            tracker.sample(0.00001);
        }
        assert_eq!(tracker.overhead(0.00003), 0.0);
    }
}
