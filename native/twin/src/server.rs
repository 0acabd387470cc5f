//! The serve loop: read the requests the kernel queued, admit each I/O through the model, and
//! send each reply when it is due, in any order, many in flight.
//!
//! One thread, no locks. What costs CPU here is waking up: one timed wake-up costs 19-30 µs of
//! CPU on a virtual machine (a bare sleep loop measures the same), far more than an I/O's own
//! work. So the loop wakes as rarely as the model allows, without moving any reply beyond its
//! tolerance:
//!
//! * a gap shorter than a wake-up's cost (`SPIN_S`) is waited out on the clock, not slept;
//! * while the volume's operations bucket is booked past the next wake-up, the loop does not
//!   wake for arrivals: an I/O read at that wake-up is admitted exactly as if read on arrival
//!   (it cannot start before the bucket frees anyway);
//! * the loop wakes for the earliest due reply and sends with it every reply due within
//!   `COALESCE_SHARE` of its own modelled latency (at most `COALESCE_CAP_S`): never late by
//!   design, early by at most that share. At queue depth 1 the share is a few µs and nothing
//!   batches; at the limit, where latency is queueing (milliseconds), a wake-up carries several
//!   replies, each within 2 % of its latency.
//!
//! Sleeps are ppoll(2) until the next wake-up less the lateness learnt on this machine. Under
//! SCHED_FIFO (asked for at start: a volume is hardware, not a task the instance's load may
//! preempt) a wake-up is the timer's own; without it the model's pacing tolerance absorbs the rest.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;

use serde_json::{json, Value};

use crate::clock::{cpu_seconds, monotonic};
use crate::fuse::{self, Control, IN_HEADER, MAX_IO, READ, READ_BUFFER, RW_IN, WRITE};
use crate::model::{VolumeModel, STALL_S};
use crate::splice::{DataPath, Failed, ReplyPipe};
use crate::store::Store;
use crate::tracking::PathTracker;

/// A gap shorter than this is waited out on the clock: sleeping and waking costs about as much.
const SPIN_S: f64 = 0.000_020;
/// A reply may leave this share of its own modelled latency early to share a wake-up.
pub const COALESCE_SHARE: f64 = 0.02;
const COALESCE_CAP_S: f64 = 0.000_200;
/// Arrivals are left unread at most this long, even behind a busy bucket.
const DEFER_MAX_S: f64 = 0.001;
const EARLY_GAIN: f64 = 0.05;
/// A wake-up later than this is a descheduled process, not timer lateness.
const MAX_EARLY_S: f64 = 0.002;
const IDLE_WAIT_S: f64 = 0.5;

enum Answer {
    Read { offset: u64, length: usize },
    Write { size: u32 },
}

/// A reply waiting for its time.
struct Pending {
    unique: u64,
    answer: Answer,
    modelled: bool,
    due: f64,
}

/// Replies in flight: a slab, and two heaps of (time in ns, sequence, slot) with lazy deletion:
/// by due time (when to wake) and by the earliest a reply may leave (what a wake-up sends).
/// Each entry carries the reply's sequence number: a slot reused by a later reply leaves the
/// heaps' old entries for it stale, and they are skipped.
#[derive(Default)]
struct InFlight {
    slots: Vec<Option<(u64, Pending)>>,
    free: Vec<usize>,
    by_due: BinaryHeap<Reverse<(i64, u64, usize)>>,
    by_earliest: BinaryHeap<Reverse<(i64, u64, usize)>>,
    seq: u64,
}

impl InFlight {
    fn push(&mut self, pending: Pending, earliest: f64) {
        self.seq += 1;
        let entry_due = pending.due;
        let entry = Some((self.seq, pending));
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = entry;
                slot
            }
            None => {
                self.slots.push(entry);
                self.slots.len() - 1
            }
        };
        let due = entry_due;
        // Rounded up to the ns: a reply never leaves before its earliest time.
        self.by_earliest
            .push(Reverse(((earliest * 1e9).ceil() as i64, self.seq, slot)));
        self.by_due
            .push(Reverse(((due * 1e9).ceil() as i64, self.seq, slot)));
    }

    fn live(&self, seq: u64, slot: usize) -> bool {
        matches!(&self.slots[slot], Some((s, _)) if *s == seq)
    }

    fn take(&mut self, seq: u64, slot: usize) -> Option<Pending> {
        if !self.live(seq, slot) {
            return None;
        }
        let (_, pending) = self.slots[slot].take()?;
        self.free.push(slot);
        Some(pending)
    }

    /// When the loop must be awake next: the earliest due time in flight.
    fn wake_at(&mut self) -> Option<f64> {
        while let Some(&Reverse((at, seq, slot))) = self.by_due.peek() {
            if self.live(seq, slot) {
                return Some(at as f64 / 1e9);
            }
            self.by_due.pop();
        }
        None
    }

    /// The next reply that may leave by `now_ns`, if any.
    fn next_sendable(&mut self, now_ns: i64) -> Option<Pending> {
        while let Some(&Reverse((at, seq, slot))) = self.by_earliest.peek() {
            if at > now_ns {
                return None;
            }
            self.by_earliest.pop();
            if let Some(pending) = self.take(seq, slot) {
                return Some(pending);
            }
        }
        None
    }

    fn is_empty(&self) -> bool {
        self.slots.len() == self.free.len()
    }

    fn drain(&mut self) -> Vec<Pending> {
        self.by_due.clear();
        let mut order: Vec<(i64, u64, usize)> =
            self.by_earliest.drain().map(|Reverse(e)| e).collect();
        order.sort_unstable();
        order
            .into_iter()
            .filter_map(|(_, seq, slot)| self.take(seq, slot))
            .collect()
    }
}

const MAX_STALLS_KEPT: usize = 50;

/// How far replies left from their due time (µs, log2 buckets, early and late apart), and the
/// stalls: replies later than STALL_S, with when they were due.
#[derive(Default)]
pub struct Timing {
    late: [u64; 24],
    early: u64,
    max_late_us: f64,
    max_early_us: f64,
    count: u64,
    stalls: Vec<(f64, f64)>, // (due, late s), one per stall (replies due within it are one stall)
    stall_end: Option<f64>,
    stalled_replies: u64,
}

impl Timing {
    /// Records one reply; a reply STALL_S or more late that is not due within the stall before
    /// it begins a new stall, whose length is returned.
    fn record(&mut self, due: f64, error_s: f64) -> Option<f64> {
        self.count += 1;
        let us = error_s * 1e6;
        if us < 0.0 {
            self.early += 1;
            self.max_early_us = self.max_early_us.max(-us);
            return None;
        }
        let mut stall = None;
        if error_s >= STALL_S {
            self.stalled_replies += 1;
            if !self.stall_end.is_some_and(|end| due <= end) {
                stall = Some(error_s);
                self.stall_end = Some(due + error_s);
                if self.stalls.len() < MAX_STALLS_KEPT {
                    self.stalls.push((due, error_s));
                }
            }
        }
        self.max_late_us = self.max_late_us.max(us);
        let bucket = if us < 1.0 {
            0
        } else {
            (us.log2().floor() as usize + 1).min(23)
        };
        self.late[bucket] += 1;
        stall
    }

    /// The upper edge (µs) of the bucket holding quantile `q` of the replies' lateness (early: 0).
    fn quantile(&self, q: f64) -> f64 {
        let wanted = ((q * self.count as f64).ceil() as u64).max(1);
        let mut seen = self.early;
        if seen >= wanted {
            return 0.0;
        }
        for (index, n) in self.late.iter().enumerate() {
            seen += n;
            if seen >= wanted {
                return if index == 0 {
                    1.0
                } else {
                    (1u64 << index) as f64
                };
            }
        }
        self.max_late_us
    }

    fn summary(&self, started: Option<f64>) -> Value {
        if self.count == 0 {
            return Value::Null;
        }
        let origin = started.unwrap_or(0.0);
        let stalls: Vec<Value> = self
            .stalls
            .iter()
            .map(|&(due, late)| json!({"elapsed_s": round(due - origin, 3), "late_ms": round(late * 1e3, 1)}))
            .collect();
        json!({
            "stalls": stalls,
            "stalled_replies": self.stalled_replies,
            "replies": self.count,
            "early": self.early,
            "max_early_us": round(self.max_early_us, 1),
            "late_p50_us_at_most": self.quantile(0.5),
            "late_p99_us_at_most": self.quantile(0.99),
            "max_late_us": round(self.max_late_us, 1),
        })
    }
}

/// The twin's side of an I/O: the model (once switched on), the parent's delays and counters.
pub struct Twin {
    pub model: VolumeModel,
    pub modelling: bool,
    pub overhead_s: f64,
    pub fixed_delay_s: f64,
    started: Option<f64>,
    cpu_started: Option<f64>,
    pub clamped: u64,
    pub timing: Timing,
    pub realtime: Result<(), String>,
    pub loop_stats: Value,
    pub path: PathTracker,
    model_started_unix: Option<f64>,
    /// How read replies leave: spliced or copied, and how many each way.
    pub data_path: DataPath,
}

impl Twin {
    pub fn new(model: VolumeModel, realtime: Result<(), String>) -> Self {
        Twin {
            model,
            modelling: false,
            overhead_s: 0.0,
            fixed_delay_s: 0.0,
            started: None,
            cpu_started: None,
            clamped: 0,
            timing: Timing::default(),
            realtime,
            loop_stats: Value::Null,
            path: PathTracker::default(),
            model_started_unix: None,
            data_path: DataPath::default(),
        }
    }

    pub fn start_model(&mut self) {
        self.modelling = true;
        self.model_started_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .map(|d| d.as_secs_f64());
        self.started = Some(monotonic());
        self.cpu_started = Some(cpu_seconds());
    }

    /// When the reply to this I/O, arriving at `now`, is due.
    fn due(&mut self, now: f64, offset: u64, length: u64, write: bool) -> f64 {
        if !self.modelling {
            return now + self.fixed_delay_s;
        }
        let start = self.model.admission.admit(now, offset, length, write);
        let overhead = self.path.overhead(self.overhead_s);
        let mut service = self.model.service.sample() - overhead;
        if service < 0.0 {
            self.clamped += 1;
            service = 0.0;
        }
        start + service
    }

    pub fn state(&self) -> Value {
        let admission = &self.model.admission;
        let started = self.started;
        let events: Vec<Value> = admission
            .events
            .iter()
            .map(|e| {
                json!({
                    "elapsed_s": round(e.at - started.unwrap_or(e.at), 3),
                    "event": e.name,
                    "credits": round(e.credits, 1),
                    "ceiling_iops": e.iops,
                    "ceiling_mibps": e.mibps,
                })
            })
            .collect();
        let cpu = self.cpu_started.map_or(0.0, |c| cpu_seconds() - c);
        json!({
            "implementation": "native",
            "data_path": self.data_path.name(),
            "data_path_detail": self.data_path.summary(),
            "realtime": self.realtime.is_ok(),
            "realtime_refused": self.realtime.as_ref().err(),
            "modelled_s": started.map_or(0.0, |s| round(monotonic() - s, 3)),
            "cpu_s": round(cpu, 4),
            "ios": admission.ios,
            "operations": admission.operations,
            "bytes": admission.bytes,
            "overhead_s": self.overhead_s,
            "model_started_unix": self.model_started_unix,
            "path_tracking": self.path.summary(),
            "clamped_ios": self.clamped,
            "credits_left": if admission.limits.credit_capacity > 0.0 {
                json!(round(admission.credits, 1))
            } else {
                Value::Null
            },
            "events": events,
            "reply_timing": self.timing.summary(started),
            "coalesce_share": COALESCE_SHARE,
            "loop": self.loop_stats,
        })
    }
}

pub fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// One reply: the header and its parts in one writev(2), as /dev/fuse wants a reply whole.
fn send(fd: i32, unique: u64, error: i32, parts: &[&[u8]]) -> io::Result<()> {
    let length = fuse::OUT_HEADER + parts.iter().map(|p| p.len()).sum::<usize>();
    let header = fuse::out_header(length, error, unique);
    let mut iov = [libc::iovec {
        iov_base: header.as_ptr() as *mut _,
        iov_len: header.len(),
    }; 3];
    let mut count = 1;
    for part in parts.iter().filter(|p| !p.is_empty()).take(2) {
        iov[count] = libc::iovec {
            iov_base: part.as_ptr() as *mut _,
            iov_len: part.len(),
        };
        count += 1;
    }
    // SAFETY: the first `count` iovecs point into live buffers of their length.
    let written = unsafe { libc::writev(fd, iov.as_ptr(), count as i32) };
    if written < 0 {
        let code = errno();
        // ENOENT: the request was interrupted meanwhile; anything else is the mount's end
        if code != libc::ENOENT {
            return Err(io::Error::from_raw_os_error(code));
        }
    }
    Ok(())
}

/// Serves one file of `size` bytes on an open /dev/fuse descriptor (or a socket in tests).
pub struct Server<'a> {
    fd: i32,
    size: u64,
    store: Store,
    /// Where read replies of written ranges go through (None: the copy path).
    pipe: Option<ReplyPipe>,
    twin: &'a mut Twin,
    in_flight: InFlight,
    buffer: Vec<u8>,
    early_s: f64,
    coalesce: bool,
    pub stopping: bool,
    wakeups: u64,
    spins: u64,
    deferred: u64,
    forgiven_s: f64,
    idle_since: Option<f64>, // when the last reply left with nothing else in flight
}

impl<'a> Server<'a> {
    /// `splice`: send read replies by splice(2) where the kernel allows (see `splice`).
    pub fn new(
        fd: i32,
        size: u64,
        store: Store,
        twin: &'a mut Twin,
        coalesce: bool,
        splice: bool,
    ) -> Self {
        let pipe = if !splice {
            Err("--copy".to_string())
        } else if !is_character_device(fd) {
            // splice(2) into a socket sends each pipe buffer as its own message: a reply in pieces
            Err("the FUSE descriptor is not /dev/fuse (a socket in tests)".to_string())
        } else {
            ReplyPipe::new()
        };
        let pipe = match pipe {
            Ok((pipe, short)) => {
                twin.data_path.pipe_bytes = Some(pipe.bytes());
                twin.data_path.pipe_short = short;
                Some(pipe)
            }
            Err(reason) => {
                twin.data_path.copy_reason = Some(reason);
                None
            }
        };
        Server {
            fd,
            size,
            store,
            pipe,
            twin,
            in_flight: InFlight::default(),
            buffer: vec![0; READ_BUFFER],
            early_s: 0.0,
            coalesce,
            stopping: false,
            wakeups: 0,
            spins: 0,
            deferred: 0,
            forgiven_s: 0.0,
            idle_since: None,
        }
    }

    fn answer(&mut self, pending: Pending) -> io::Result<()> {
        match pending.answer {
            Answer::Write { size } => {
                let out = fuse::Body::default().u32(size).u32(0);
                send(self.fd, pending.unique, 0, &[&out.0])
            }
            Answer::Read { offset, length } => {
                let counts = &mut self.twin.data_path;
                // A range never written is answered from the zero page by writev: nothing to read
                // (vmsplice of the zero page into the pipe measured no cheaper: one copy either way).
                if !self.store.ever_written(offset, length as u64) {
                    counts.zero += 1;
                } else if let Some(pipe) = self.pipe.as_mut().filter(|p| p.fits(offset, length)) {
                    match pipe.reply(self.fd, pending.unique, self.store.file(), offset, length) {
                        Ok(()) => {
                            counts.spliced += 1;
                            return Ok(());
                        }
                        Err(Failed::Data(e)) => {
                            let code = e.raw_os_error().unwrap_or(libc::EIO);
                            return send(self.fd, pending.unique, code, &[]);
                        }
                        Err(Failed::Reply(e)) => return Err(e),
                        Err(Failed::Refused(e)) => {
                            // Nothing of this reply reached the kernel: it goes by copy, as all after it.
                            counts.copy_reason = Some(format!("splice refused: {e}"));
                            counts.copied += 1;
                            self.pipe = None;
                        }
                    }
                } else {
                    counts.copied += 1;
                }
                let failed = match self.store.read(offset, length) {
                    Ok(data) => return send(self.fd, pending.unique, 0, &[data]),
                    Err(e) => e.raw_os_error().unwrap_or(libc::EIO),
                };
                send(self.fd, pending.unique, failed, &[])
            }
        }
    }

    fn send_due(&mut self) -> io::Result<()> {
        loop {
            let now = monotonic();
            let Some(pending) = self.in_flight.next_sendable((now * 1e9) as i64) else {
                return Ok(());
            };
            if pending.modelled {
                if let Some(stall) = self.twin.timing.record(pending.due, now - pending.due) {
                    // The twin could not run this long (the machine stalled it: under SCHED_FIFO
                    // nothing else here can). The buckets may catch up on it: the volume did not
                    // stop, its emulator did.
                    self.twin.model.admission.forgive(stall);
                    self.forgiven_s += stall;
                }
            }
            self.answer(pending)?;
            if self.in_flight.is_empty() {
                self.idle_since = Some(monotonic());
            }
        }
    }

    fn queue(&mut self, arrived: f64, due: f64, unique: u64, answer: Answer) {
        let modelled = self.twin.modelling;
        let slack = if modelled && self.coalesce {
            (COALESCE_SHARE * (due - arrived)).min(COALESCE_CAP_S)
        } else {
            0.0
        };
        self.in_flight.push(
            Pending {
                unique,
                answer,
                modelled,
                due,
            },
            due - slack,
        );
    }

    fn io(&mut self, write: bool, unique: u64, length: usize, now: f64) -> io::Result<()> {
        if length < IN_HEADER + RW_IN {
            return send(self.fd, unique, libc::EINVAL, &[]);
        }
        let body = &self.buffer[IN_HEADER..length];
        let offset = fuse::u64_at(body, 8);
        let size = fuse::u32_at(body, 16) as usize;
        let data_len = length - IN_HEADER - RW_IN;
        let beyond = offset
            .checked_add(size as u64)
            .is_none_or(|end| end > self.size);
        if beyond || size > MAX_IO || (write && data_len < size) {
            return send(self.fd, unique, libc::EINVAL, &[]);
        }
        if let Some(idle) = self.idle_since.take() {
            self.twin.path.sample(now - idle); // a turnaround: the host's path and the client's
        }
        let due = self.twin.due(now, offset, size as u64, write);
        if write {
            let data = &self.buffer[IN_HEADER + RW_IN..IN_HEADER + RW_IN + size];
            if let Err(e) = self.store.write(offset, data) {
                return send(self.fd, unique, e.raw_os_error().unwrap_or(libc::EIO), &[]);
            }
            self.queue(now, due, unique, Answer::Write { size: size as u32 });
        } else {
            self.queue(
                now,
                due,
                unique,
                Answer::Read {
                    offset,
                    length: size,
                },
            );
        }
        Ok(())
    }

    fn dispatch(&mut self, length: usize, now: f64) -> io::Result<()> {
        if length < IN_HEADER {
            return Ok(()); // not a request: nothing to answer it by
        }
        let opcode = fuse::u32_at(&self.buffer, 4);
        let unique = fuse::u64_at(&self.buffer, 8);
        let node = fuse::u64_at(&self.buffer, 16);
        match opcode {
            READ | WRITE => self.io(opcode == WRITE, unique, length, now),
            _ => match fuse::control(opcode, node, &self.buffer[..length], self.size) {
                Control::Reply(error, body) => send(self.fd, unique, error, &[&body]),
                Control::NoReply => Ok(()),
                Control::Destroy => {
                    self.stopping = true;
                    send(self.fd, unique, 0, &[])
                }
            },
        }
    }

    /// Read every request the kernel has queued; false once the mount is gone.
    fn drain(&mut self) -> io::Result<bool> {
        loop {
            // SAFETY: the buffer is READ_BUFFER bytes long and owned by self.
            let length =
                unsafe { libc::read(self.fd, self.buffer.as_mut_ptr().cast(), READ_BUFFER) };
            if length < 0 {
                match errno() {
                    libc::EAGAIN => return Ok(true),
                    libc::EINTR | libc::ENOENT => continue, // ENOENT: interrupted before we read it
                    libc::ENODEV => return Ok(false),       // unmounted
                    code => return Err(io::Error::from_raw_os_error(code)),
                }
            }
            if length == 0 {
                return Ok(false);
            }
            self.dispatch(length as usize, monotonic())?;
            if self.stopping {
                return Ok(true);
            }
        }
    }

    fn learn_lateness(&mut self, late_s: f64) {
        if (0.0..MAX_EARLY_S).contains(&late_s) {
            self.early_s += EARLY_GAIN * (late_s - self.early_s);
        }
    }

    /// Whether an arrival read at `wake` would be admitted as if read now: the operations
    /// bucket is booked past it (an I/O merged into an open operation is the one exception,
    /// off by at most the wait, itself at most DEFER_MAX_S).
    fn arrivals_can_wait(&self, now: f64, wake: f64) -> bool {
        self.twin.modelling
            && wake - now <= DEFER_MAX_S
            && self.twin.model.admission.busy_until() >= wake
    }

    /// Serve until DESTROY, unmount or `on_extra` says stop; `extra_fd` (the parent's commands)
    /// is watched alongside and `on_extra` called when it is readable.
    pub fn serve(
        &mut self,
        extra_fd: Option<i32>,
        on_extra: &mut dyn FnMut(&mut Twin) -> bool,
    ) -> io::Result<()> {
        set_nonblocking(self.fd)?;
        let mut result = Ok(());
        while !self.stopping {
            if let Err(e) = self.send_due() {
                result = Err(e);
                break;
            }
            let now = monotonic();
            let wake = self.in_flight.wake_at();
            let timeout = match wake {
                Some(at) if at - now <= SPIN_S => {
                    self.spins += 1;
                    self.drain_or_stop(&mut result);
                    while monotonic() < at.min(now + SPIN_S) {
                        std::hint::spin_loop();
                    }
                    continue;
                }
                Some(at) => (at - now - self.early_s).max(1e-6),
                None => IDLE_WAIT_S,
            };
            let watch_fuse = !wake.is_some_and(|at| self.arrivals_can_wait(now, at));
            if !watch_fuse {
                self.deferred += 1;
            }
            let mut fds = [
                libc::pollfd {
                    fd: if watch_fuse { self.fd } else { -1 },
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: extra_fd.unwrap_or(-1),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let spec = libc::timespec {
                tv_sec: timeout.trunc() as libc::time_t,
                tv_nsec: (timeout.fract() * 1e9) as libc::c_long,
            };
            // SAFETY: fds is a live array of pollfd (negative fds are ignored) and spec a live timespec.
            let ready = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &spec, std::ptr::null()) };
            self.wakeups += 1;
            if ready < 0 {
                if errno() == libc::EINTR {
                    continue;
                }
                result = Err(io::Error::last_os_error());
                break;
            }
            if ready == 0 {
                if wake.is_some() {
                    self.learn_lateness(monotonic() - (now + timeout));
                }
                if !watch_fuse {
                    self.drain_or_stop(&mut result); // what arrived meanwhile, before replies go
                }
                continue;
            }
            if fds[1].revents != 0 && !on_extra(self.twin) {
                break;
            }
            let revents = fds[0].revents;
            if revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0
                && revents & libc::POLLIN == 0
            {
                break;
            }
            if revents & libc::POLLIN != 0 {
                self.drain_or_stop(&mut result);
            }
        }
        // Answer what is still waiting so no I/O is left hanging in the kernel. A clean stop has
        // none: an I/O answered here waited for the stop, not for its due time (counted).
        let mut at_stop = 0u64;
        for pending in self.in_flight.drain() {
            at_stop += 1;
            if self.answer(pending).is_err() {
                break;
            }
        }
        self.twin.loop_stats = json!({
            "wakeups": self.wakeups,
            "spins": self.spins,
            "deferred_arrivals": self.deferred,
            "stalls_forgiven_s": round(self.forgiven_s, 4),
            "learnt_early_us": round(self.early_s * 1e6, 1),
            "answered_at_stop": at_stop,
        });
        result
    }

    /// Drain the device; a gone mount or an error ends serving (the error is kept in `result`).
    fn drain_or_stop(&mut self, result: &mut io::Result<()>) {
        match self.drain() {
            Ok(true) => {}
            Ok(false) => self.stopping = true,
            Err(e) => {
                *result = Err(e);
                self.stopping = true;
            }
        }
    }
}

fn is_character_device(fd: i32) -> bool {
    // SAFETY: fstat fills a zeroed stat we own.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; a failed fstat leaves the answer "no".
    unsafe { libc::fstat(fd, &mut stat) == 0 && stat.st_mode & libc::S_IFMT == libc::S_IFCHR }
}

fn set_nonblocking(fd: i32) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor this process owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
