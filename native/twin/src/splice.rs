//! Read replies without copying the data through user space: splice(2) moves the backing file's
//! page-cache pages into a pipe by reference, and /dev/fuse copies them once, straight into the
//! reader's pages (the kernel's fuse_dev_splice_write). The copy path reads them into a buffer
//! and writev(2)s that buffer into /dev/fuse: two copies of every byte, and its page faults.
//!
//! /dev/fuse takes a spliced reply only whole (fewer bytes in the pipe than the reply's length is
//! EINVAL), and a pipe holds one page per buffer: a reply needs a buffer for its header and one per
//! page its range touches. A 1 MiB reply so needs a pipe of 2 MiB (sizes are powers of two), above
//! the fs.pipe-max-size of 1 MiB that only CAP_SYS_RESOURCE may exceed (a container's root may lack
//! it). With a smaller pipe the replies that fit are spliced and the larger ones copied, and the
//! twin's state says so.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use serde_json::{json, Value};

use crate::fuse::{self, MAX_IO, OUT_HEADER};

const PAGE: usize = 4096;
/// The header's buffer, the data's pages, one more for a range off page boundaries.
const NEEDED: usize = MAX_IO + 2 * PAGE;
const PIPE_MAX_SIZE: &str = "/proc/sys/fs/pipe-max-size";

/// How read replies left, for the twin's state.
#[derive(Default)]
pub struct DataPath {
    /// Why no reply is spliced (None: those that fit the pipe are).
    pub copy_reason: Option<String>,
    /// The pipe's size, and why it is smaller than the largest reply needs (those are copied).
    pub pipe_bytes: Option<usize>,
    pub pipe_short: Option<String>,
    pub spliced: u64,
    pub copied: u64,
    pub zero: u64,
}

impl DataPath {
    pub fn name(&self) -> &'static str {
        if self.copy_reason.is_some() {
            "copy"
        } else {
            "splice"
        }
    }

    pub fn summary(&self) -> Value {
        json!({
            "copy_reason": self.copy_reason,
            "pipe_bytes": self.pipe_bytes,
            "pipe_short_reason": self.pipe_short,
            "read_replies_spliced": self.spliced,
            "read_replies_copied": self.copied,
            "read_replies_of_zeros": self.zero,
        })
    }
}

/// Why a spliced reply did not go out.
pub enum Failed {
    /// The kernel does not splice into this descriptor: the caller sends by copy from now on.
    Refused(io::Error),
    /// Reading the backing file failed: the caller answers the request with this error.
    Data(io::Error),
    /// Writing the reply failed as a copied reply's would have (the mount's end).
    Reply(io::Error),
}

/// The one pipe every spliced reply passes through; empty between replies.
pub struct ReplyPipe {
    read: OwnedFd,
    write: OwnedFd,
    buffers: usize,
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// An error that says the kernel cannot splice here, not that this reply went wrong.
fn refusal(code: i32) -> bool {
    matches!(code, libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)
}

impl ReplyPipe {
    /// A non-blocking pipe that holds the largest reply, else the largest this process may have
    /// (with why it is smaller), or why there is none.
    pub fn new() -> Result<(Self, Option<String>), String> {
        let mut fds = [0i32; 2];
        // SAFETY: pipe2 fills the two-element array we own.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
            return Err(format!("pipe2: {}", io::Error::last_os_error()));
        }
        // SAFETY: pipe2 returned two new descriptors that nothing else owns.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let resize = |bytes: usize| {
            // SAFETY: fcntl on a descriptor we own.
            let size = unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, bytes as i32) };
            usize::try_from(size).map_err(|_| io::Error::last_os_error())
        };
        let (size, short) = match resize(NEEDED) {
            Ok(size) => (size, None),
            Err(refused) => {
                // The largest this process may have: fs.pipe-max-size.
                let max = std::fs::read_to_string(PIPE_MAX_SIZE)
                    .map_err(|e| format!("{PIPE_MAX_SIZE}: {e}"))?;
                let max: usize = max
                    .trim()
                    .parse()
                    .map_err(|_| format!("{PIPE_MAX_SIZE}: {max:?}, a size expected"))?;
                let size = resize(max).map_err(|e| format!("a pipe of {max} bytes: {e}"))?;
                let why = format!(
                    "a pipe of {NEEDED} bytes: {refused} (above {PIPE_MAX_SIZE} without \
                     CAP_SYS_RESOURCE); replies larger than {size} bytes less a page are copied"
                );
                (size, Some(why))
            }
        };
        let pipe = ReplyPipe {
            read,
            write,
            buffers: size / PAGE,
        };
        Ok((pipe, short))
    }

    pub fn bytes(&self) -> usize {
        self.buffers * PAGE
    }

    /// Whether a reply of `length` bytes from `offset` fits the pipe whole.
    pub fn fits(&self, offset: u64, length: usize) -> bool {
        let pages = (offset as usize % PAGE + length).div_ceil(PAGE);
        pages < self.buffers // and one buffer for the header
    }

    /// Sends the reply to READ `unique`: `length` bytes of `file` from `offset`.
    pub fn reply(
        &mut self,
        fuse_fd: i32,
        unique: u64,
        file: &File,
        offset: u64,
        length: usize,
    ) -> Result<(), Failed> {
        let header = fuse::out_header(OUT_HEADER + length, 0, unique);
        // SAFETY: writes the 16-byte header we own into the pipe, empty between replies.
        let put =
            unsafe { libc::write(self.write.as_raw_fd(), header.as_ptr().cast(), OUT_HEADER) };
        if put != OUT_HEADER as isize {
            let error = io::Error::last_os_error();
            self.empty();
            return Err(Failed::Data(error));
        }
        if let Err(error) = self.fill(file, offset, length) {
            self.empty();
            return Err(error);
        }
        let total = OUT_HEADER + length;
        // SAFETY: splice between two descriptors we hold; null offsets: the pipe's and the device's own.
        let moved = unsafe {
            libc::splice(
                self.read.as_raw_fd(),
                std::ptr::null_mut(),
                fuse_fd,
                std::ptr::null_mut(),
                total,
                0,
            )
        };
        if moved == total as isize {
            return Ok(());
        }
        let code = if moved < 0 { errno() } else { libc::EIO };
        // /dev/fuse takes the pipe's buffers before it judges the reply; a refusal leaves them.
        self.empty();
        match code {
            libc::ENOENT => Ok(()), // interrupted meanwhile, as on the copy path
            code if refusal(code) => Err(Failed::Refused(io::Error::from_raw_os_error(code))),
            code => Err(Failed::Reply(io::Error::from_raw_os_error(code))),
        }
    }

    /// Moves the range's pages into the pipe by reference; a short splice is continued.
    fn fill(&mut self, file: &File, offset: u64, length: usize) -> Result<(), Failed> {
        let mut done = 0;
        while done < length {
            let mut at = (offset + done as u64) as libc::loff_t;
            // SAFETY: splice from the file at `at` (a local the kernel advances) into our pipe.
            let moved = unsafe {
                libc::splice(
                    file.as_raw_fd(),
                    &mut at,
                    self.write.as_raw_fd(),
                    std::ptr::null_mut(),
                    length - done,
                    libc::SPLICE_F_NONBLOCK,
                )
            };
            match moved {
                n if n > 0 => done += n as usize,
                0 => return Err(Failed::Data(io::Error::from_raw_os_error(libc::EIO))), // past the end
                _ => {
                    let code = errno();
                    if code == libc::EINTR {
                        continue;
                    }
                    let error = io::Error::from_raw_os_error(code);
                    return Err(if refusal(code) {
                        Failed::Refused(error)
                    } else {
                        Failed::Data(error)
                    });
                }
            }
        }
        Ok(())
    }

    /// Drops whatever a failed reply left in the pipe, so the next reply starts on an empty one.
    fn empty(&mut self) {
        let mut sink = [0u8; 64 * 1024];
        let fd = self.read.as_raw_fd();
        // SAFETY: reads into a stack buffer of its length; the pipe is non-blocking (EAGAIN: empty).
        while unsafe { libc::read(fd, sink.as_mut_ptr().cast(), sink.len()) } > 0 {}
    }
}
