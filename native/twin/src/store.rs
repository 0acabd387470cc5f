//! The volume's data: the sparse backing file the agent created, and which of it was ever written.
//!
//! A read of a range nothing was ever written to is answered from a zero page held in memory,
//! without touching the backing file: reading a hole through the page cache costs more CPU than
//! the reply itself (it fills the cache with zero pages), and a fresh volume is all holes (a
//! pre-warm reads every block of it). Chunks are marked written before the data lands, so a
//! marked chunk is read from the file, where a hole still reads as zeros.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

const CHUNK_SHIFT: u32 = 16; // 64 KiB: 2 MiB of map per TiB

pub struct Store {
    file: File,
    written: Vec<u64>,
    pub zeros: Vec<u8>,
    pub scratch: Vec<u8>,
}

impl Store {
    pub fn new(file: File, capacity: u64, max_io: usize) -> Self {
        let chunks = capacity.div_ceil(1 << CHUNK_SHIFT) as usize;
        let mut zeros = vec![0u8; max_io];
        // Fresh zeroed memory maps the kernel's shared zero page, which get_user_pages cannot take
        // on its fast path: every reply from it would fault. Write each page once to own it.
        for page in zeros.chunks_mut(4096) {
            // SAFETY: a volatile write of 0 into memory we own (kept: the compiler knows it is 0).
            unsafe { std::ptr::write_volatile(page.as_mut_ptr(), 0) };
        }
        Store {
            file,
            written: vec![0; chunks.div_ceil(64)],
            zeros,
            scratch: vec![0; max_io],
        }
    }

    fn chunks(offset: u64, length: u64) -> std::ops::Range<usize> {
        let first = (offset >> CHUNK_SHIFT) as usize;
        let last = ((offset + length.max(1) - 1) >> CHUNK_SHIFT) as usize;
        first..last + 1
    }

    pub fn ever_written(&self, offset: u64, length: u64) -> bool {
        Self::chunks(offset, length).any(|c| self.written[c / 64] & (1 << (c % 64)) != 0)
    }

    pub fn write(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        for c in Self::chunks(offset, data.len() as u64) {
            self.written[c / 64] |= 1 << (c % 64);
        }
        self.file.write_all_at(data, offset)
    }

    /// The backing file, for replies spliced from its pages.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The range's data: the zero page for a range never written, else read into scratch.
    pub fn read(&mut self, offset: u64, length: usize) -> io::Result<&[u8]> {
        if !self.ever_written(offset, length as u64) {
            return Ok(&self.zeros[..length]);
        }
        self.file
            .read_exact_at(&mut self.scratch[..length], offset)?;
        Ok(&self.scratch[..length])
    }
}
