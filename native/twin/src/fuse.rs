//! The FUSE wire protocol for one file (include/uapi/linux/fuse.h), as `agent/twin/fuse.py` speaks it.
//!
//! Only what a loop device needs: INIT, LOOKUP, GETATTR, OPEN, READ, WRITE, FLUSH, FSYNC, RELEASE,
//! STATFS, the directory calls for the mount point, FORGET and DESTROY; anything else is ENOSYS.

use std::ffi::CString;
use std::io;

pub const LOOKUP: u32 = 1;
pub const FORGET: u32 = 2;
pub const GETATTR: u32 = 3;
pub const SETATTR: u32 = 4;
pub const OPEN: u32 = 14;
pub const READ: u32 = 15;
pub const WRITE: u32 = 16;
pub const STATFS: u32 = 17;
pub const RELEASE: u32 = 18;
pub const FSYNC: u32 = 20;
pub const FLUSH: u32 = 25;
pub const INIT: u32 = 26;
pub const OPENDIR: u32 = 27;
pub const READDIR: u32 = 28;
pub const RELEASEDIR: u32 = 29;
pub const FSYNCDIR: u32 = 30;
pub const ACCESS: u32 = 34;
pub const INTERRUPT: u32 = 36;
pub const DESTROY: u32 = 38;
pub const BATCH_FORGET: u32 = 42;

const ASYNC_READ: u32 = 1 << 0;
const BIG_WRITES: u32 = 1 << 5;
const ASYNC_DIO: u32 = 1 << 15;
const MAX_PAGES: u32 = 1 << 22;
const FOPEN_DIRECT_IO: u32 = 1 << 0;
const FOPEN_PARALLEL_DIRECT_WRITES: u32 = 1 << 6;
const PROTOCOL_MINOR: u32 = 38;
/// Background requests the kernel may have outstanding: async direct I/O counts here, and a
/// queue-depth sweep to 64 on several jobs must not wait in the kernel instead of in the model.
const MAX_BACKGROUND: u16 = 256;
const CONGESTION_THRESHOLD: u16 = 224;

pub const IN_HEADER: usize = 40;
pub const OUT_HEADER: usize = 16;
pub const RW_IN: usize = 40;
/// max_pages 256: a loop device's largest request arrives whole.
pub const MAX_IO: usize = 1 << 20;
pub const READ_BUFFER: usize = MAX_IO + 64 * 1024;

pub const ROOT: u64 = 1;
pub const FILE: u64 = 2;
const FILE_NAME: &[u8] = b"volume";

pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
pub fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// A reply body built field by field, little-endian.
#[derive(Default)]
pub struct Body(pub Vec<u8>);

impl Body {
    pub fn u16(mut self, v: u16) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn i32(mut self, v: i32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn zeros(mut self, n: usize) -> Self {
        self.0.resize(self.0.len() + n, 0);
        self
    }
    pub fn bytes(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }
}

pub fn out_header(length: usize, error: i32, unique: u64) -> [u8; OUT_HEADER] {
    let mut header = [0u8; OUT_HEADER];
    header[0..4].copy_from_slice(&(length as u32).to_le_bytes());
    header[4..8].copy_from_slice(&(-error).to_le_bytes());
    header[8..16].copy_from_slice(&unique.to_le_bytes());
    header
}

/// fuse_attr: ino size blocks atime mtime ctime (u64), then nsecs, mode, nlink, uid, gid, rdev,
/// blksize, flags (u32).
fn attr(node: u64, size: u64) -> Body {
    let (mode, size, links) = if node == ROOT {
        (0o040755, 0, 2)
    } else {
        (0o100600, size, 1)
    };
    Body::default()
        .u64(node)
        .u64(size)
        .u64(size.div_ceil(512))
        .zeros(24)
        .zeros(12)
        .u32(mode)
        .u32(links)
        .zeros(12)
        .u32(4096)
        .u32(0)
}

/// What to answer a request other than READ and WRITE: (error, body), or None for no reply.
pub enum Control {
    Reply(i32, Vec<u8>),
    NoReply,
    Destroy,
}

pub fn control(opcode: u32, node: u64, request: &[u8], size: u64) -> Control {
    let body = &request[IN_HEADER..];
    let reply = |b: Body| Control::Reply(0, b.0);
    match opcode {
        INIT => {
            if body.len() < 16 {
                return Control::Reply(libc::EINVAL, Vec::new());
            }
            let (major, minor, readahead, flags) = (
                u32_at(body, 0),
                u32_at(body, 4),
                u32_at(body, 8),
                u32_at(body, 12),
            );
            if major != 7 {
                return Control::Reply(libc::EPROTO, Vec::new());
            }
            let wanted = ASYNC_READ | BIG_WRITES | ASYNC_DIO | MAX_PAGES;
            reply(
                Body::default()
                    .u32(7)
                    .u32(minor.min(PROTOCOL_MINOR))
                    .u32(readahead)
                    .u32(flags & wanted)
                    .u16(MAX_BACKGROUND)
                    .u16(CONGESTION_THRESHOLD)
                    .u32(MAX_IO as u32)
                    .u32(1)
                    .u16((MAX_IO / 4096) as u16)
                    .u16(0)
                    .u32(0)
                    .u32(0)
                    .zeros(24),
            )
        }
        LOOKUP => {
            let name: &[u8] = match body.iter().position(|&c| c == 0) {
                Some(end) => &body[..end],
                None => body,
            };
            if node == ROOT && name == FILE_NAME {
                let entry = Body::default()
                    .u64(FILE)
                    .u64(0)
                    .u64(3600)
                    .u64(3600)
                    .u32(0)
                    .u32(0);
                reply(entry.bytes(&attr(FILE, size).0))
            } else {
                Control::Reply(libc::ENOENT, Vec::new())
            }
        }
        GETATTR | SETATTR => reply(
            Body::default()
                .u64(3600)
                .u32(0)
                .u32(0)
                .bytes(&attr(node, size).0),
        ),
        OPEN => reply(
            Body::default()
                .u64(0)
                .u32(FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES)
                .i32(0),
        ),
        OPENDIR => reply(Body::default().u64(0).u32(0).i32(0)),
        READDIR => reply(Body::default()), // the mount point lists nothing; the file is reached by name
        FLUSH | FSYNC | RELEASE | RELEASEDIR | FSYNCDIR | ACCESS => reply(Body::default()),
        STATFS => reply(
            Body::default()
                .u64(size / 4096)
                .u64(0)
                .u64(0)
                .u64(2)
                .u64(0)
                .u32(4096)
                .u32(255)
                .u32(4096)
                .u32(0)
                .zeros(24),
        ),
        DESTROY => Control::Destroy,
        FORGET | BATCH_FORGET | INTERRUPT => Control::NoReply,
        _ => Control::Reply(libc::ENOSYS, Vec::new()),
    }
}

fn cstring(text: &str) -> io::Result<CString> {
    CString::new(text).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a path"))
}

/// mount(2) a FUSE file system served on `fd` (root only; no fusermount needed).
pub fn mount(mountpoint: &str, fd: i32) -> io::Result<()> {
    let options =
        format!("fd={fd},rootmode=40000,user_id=0,group_id=0,allow_other,default_permissions");
    let (source, target) = (cstring("storagebench-twin")?, cstring(mountpoint)?);
    let (kind, data) = (cstring("fuse.storagebench-twin")?, cstring(&options)?);
    let flags = libc::MS_NOSUID | libc::MS_NODEV;
    // SAFETY: every pointer is a NUL-terminated string that outlives the call.
    let result = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            kind.as_ptr(),
            flags,
            data.as_ptr().cast(),
        )
    };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
