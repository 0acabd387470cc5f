//! storagebench-twin: the EBS twin's data path, compiled.
//!
//! `storagebench-twin --backing F --mountpoint M --capacity N --spec JSON [--seed S]` mounts one
//! file over FUSE and answers every I/O when the volume model says, speaking to its parent over
//! stdin/stdout exactly as `python3 -m storagebench.agent.twin.serve` does (`ready`, then
//! `delay`/`overhead`/`model`/`stop` in, `state <json>` out). `--fuse-fd N` serves an inherited
//! descriptor instead of mounting (tests: a SOCK_SEQPACKET pair stands in for /dev/fuse).
//! `--copy` sends read replies through a user-space buffer instead of splicing them (`splice`).
//!
//! `storagebench-twin replay` reads `{"spec", "seed", "overhead_s", "ios": [[now, offset, length,
//! write], ...]}` on stdin and prints each I/O's start and service time and the model's counters:
//! the shared table (`tests/data/twin/model-table.json`) holds the Python model's answers.

mod clock;
mod control;
mod fuse;
mod model;
mod replay;
mod server;
mod splice;
mod store;
mod tracking;

use std::fs::OpenOptions;
use std::os::unix::io::{AsRawFd, IntoRawFd};
use std::process::ExitCode;

use control::{say, Control};
use model::VolumeModel;
use server::{Server, Twin};
use store::Store;

const REALTIME_PRIORITY: i32 = 10;

struct Args {
    backing: String,
    mountpoint: Option<String>,
    fuse_fd: Option<i32>,
    capacity: u64,
    spec: String,
    seed: Option<u64>,
    realtime: bool,
    coalesce: bool,
    splice: bool,
}

const USAGE: &str =
    "usage: storagebench-twin --backing FILE (--mountpoint DIR | --fuse-fd N) --capacity BYTES \
--spec JSON [--seed N] [--no-realtime] [--exact] [--copy] | storagebench-twin replay";

fn parse_args(argv: &[String]) -> Result<Args, String> {
    let mut args = Args {
        backing: String::new(),
        mountpoint: None,
        fuse_fd: None,
        capacity: 0,
        spec: String::new(),
        seed: None,
        realtime: true,
        coalesce: true,
        splice: true,
    };
    let mut words = argv.iter();
    while let Some(flag) = words.next() {
        if flag == "--no-realtime" {
            args.realtime = false;
            continue;
        }
        if flag == "--copy" {
            args.splice = false; // read replies through a user-space buffer, as before splice
            continue;
        }
        if flag == "--exact" {
            args.coalesce = false; // every reply at its due time, each woken for
            continue;
        }
        let value = words
            .next()
            .ok_or_else(|| format!("{flag}: a value expected"))?;
        let number = |what: &str| {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag}: {value:?}, {what} expected"))
        };
        match flag.as_str() {
            "--backing" => args.backing = value.clone(),
            "--mountpoint" => args.mountpoint = Some(value.clone()),
            "--fuse-fd" => args.fuse_fd = Some(number("a descriptor number")? as i32),
            "--capacity" => args.capacity = number("a size in bytes")?,
            "--spec" => args.spec = value.clone(),
            "--seed" => args.seed = Some(number("a whole number")?),
            _ => return Err(format!("unknown argument {flag:?}; {USAGE}")),
        }
    }
    if args.backing.is_empty() || args.spec.is_empty() || args.capacity == 0 {
        return Err(format!(
            "--backing, --capacity and --spec are required; {USAGE}"
        ));
    }
    if args.mountpoint.is_some() == args.fuse_fd.is_some() {
        return Err(format!(
            "one of --mountpoint and --fuse-fd expected; {USAGE}"
        ));
    }
    Ok(args)
}

/// A seed from the kernel when none is given: each twin draws its own service times.
fn random_seed() -> u64 {
    let mut seed = [0u8; 8];
    // SAFETY: getrandom fills the 8-byte array we own.
    unsafe { libc::getrandom(seed.as_mut_ptr().cast(), seed.len(), 0) };
    u64::from_le_bytes(seed)
}

/// SCHED_FIFO, so the twin's replies are on time whatever else this machine runs.
fn go_realtime() -> Result<(), String> {
    let param = libc::sched_param {
        sched_priority: REALTIME_PRIORITY,
    };
    // SAFETY: sets this process's own policy from a live sched_param.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        return Err(format!(
            "SCHED_FIFO refused: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

fn serve(args: Args) -> ExitCode {
    let spec: serde_json::Value = match serde_json::from_str(&args.spec) {
        Ok(v) => v,
        Err(e) => {
            say(&format!("error spec: not JSON: {e}"));
            return ExitCode::from(2);
        }
    };
    let model = match VolumeModel::from_spec(&spec, args.seed.unwrap_or_else(random_seed)) {
        Ok(m) => m,
        Err(e) => {
            say(&format!("error spec: {e}"));
            return ExitCode::from(2);
        }
    };
    let backing = match OpenOptions::new()
        .read(true)
        .write(true)
        .open(&args.backing)
    {
        Ok(f) => f,
        Err(e) => {
            say(&format!("error {}: {}", args.backing, e));
            return ExitCode::from(3);
        }
    };
    let fuse_fd = match (args.fuse_fd, &args.mountpoint) {
        (Some(fd), _) => fd,
        (None, Some(mountpoint)) => {
            let device = match OpenOptions::new().read(true).write(true).open("/dev/fuse") {
                Ok(f) => f,
                Err(e) => {
                    say(&format!("error /dev/fuse: {e}"));
                    return ExitCode::from(3);
                }
            };
            if let Err(e) = fuse::mount(mountpoint, device.as_raw_fd()) {
                say(&format!("error mount {mountpoint}: {e}"));
                return ExitCode::from(3);
            }
            device.into_raw_fd() // the mount's descriptor for the rest of the process
        }
        (None, None) => unreachable!("parse_args requires one of them"),
    };
    let realtime = if args.realtime {
        go_realtime()
    } else {
        Err("--no-realtime".to_string())
    };
    if realtime.is_err() {
        // Without a real-time policy, ask for wake-ups within a microsecond instead of the default 50.
        // SAFETY: prctl(PR_SET_TIMERSLACK) on this process.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000u64, 0u64, 0u64, 0u64) };
    }
    say("ready");
    let store = Store::new(backing, args.capacity, fuse::MAX_IO);
    let mut twin = Twin::new(model, realtime);
    let mut control = Control::new(0);
    let mut server = Server::new(
        fuse_fd,
        args.capacity,
        store,
        &mut twin,
        args.coalesce,
        args.splice,
    );
    let served = server.serve(Some(0), &mut |twin| control.poll(twin));
    let code = match served {
        Ok(()) => 0,
        Err(e) => {
            say(&format!("error serving: {e}"));
            4
        }
    };
    say(&format!("state {}", twin.state()));
    ExitCode::from(code)
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("replay") {
        return replay::main();
    }
    match parse_args(&argv) {
        Ok(args) => serve(args),
        Err(message) => {
            say(&format!("error arguments: {message}"));
            ExitCode::from(2)
        }
    }
}
