//! The parent's commands on stdin, one per line, read without blocking the I/O loop
//! (the protocol of `agent/twin/serve.py`; `agent/twin/volume.py` speaks it to both).
//!
//! `delay <s>`: until the model starts, answer every I/O this long after it arrives;
//! `overhead <s>`: this machine's own path, taken off every modelled service time;
//! `model`: admit and delay every I/O by the model from now on; `track on|off`: follow the host's
//! path while it runs (`tracking.rs`); `stop` (or end of input): stop.

use crate::server::Twin;

pub struct Control {
    fd: i32,
    partial: Vec<u8>,
    pub stopped: bool,
}

pub fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    // The parent reads these lines; if it is gone there is no one to tell.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

impl Control {
    pub fn new(fd: i32) -> Self {
        // SAFETY: fcntl on stdin, which this process owns.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        Control {
            fd,
            partial: Vec::new(),
            stopped: false,
        }
    }

    /// Read what the parent sent; false once it said stop or closed the pipe.
    pub fn poll(&mut self, twin: &mut Twin) -> bool {
        let mut chunk = [0u8; 4096];
        // SAFETY: reads into a stack buffer of its length.
        let n = unsafe { libc::read(self.fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        if n == 0 {
            self.stopped = true;
        } else if n > 0 {
            self.partial.extend_from_slice(&chunk[..n as usize]);
            while let Some(end) = self.partial.iter().position(|&c| c == b'\n') {
                let line: Vec<u8> = self.partial.drain(..=end).collect();
                let text = String::from_utf8_lossy(&line).trim().to_string();
                self.command(&text, twin);
            }
        }
        !self.stopped
    }

    fn command(&mut self, line: &str, twin: &mut Twin) {
        let (word, argument) = match line.split_once(' ') {
            Some((w, a)) => (w, a.trim()),
            None => (line, ""),
        };
        match word {
            "overhead" | "delay" => match argument.parse::<f64>() {
                Ok(value) if value.is_finite() => {
                    let value = value.clamp(0.0, 0.01);
                    if word == "overhead" {
                        twin.overhead_s = value;
                        twin.path.calibrated(); // the turnarounds seen so far were the calibration's
                    } else {
                        twin.fixed_delay_s = value;
                    }
                }
                _ => say(&format!("error {word} '{argument}': seconds expected")),
            },
            "model" => twin.start_model(),
            "track" => match argument {
                "on" => twin.path.switch(true),
                "off" => twin.path.switch(false),
                _ => say(&format!("error track '{argument}': on or off expected")),
            },
            "stop" => self.stopped = true,
            "" => {}
            other => say(&format!(
                "error unknown command '{other}': overhead, delay, model, track or stop expected"
            )),
        }
    }
}
