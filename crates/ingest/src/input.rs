//! Opening inputs (plain, gzip, zstd, stdin), sniffing their format, and cutting them into batches
//! of whole goals.
//!
//! A [`BatchReader`] reads large blocks and cuts each one at a goal boundary: the lines of the last
//! goal in a block are carried into the next block, so every goal lies whole inside one batch and
//! can be evaluated (and, if its lines are out of order, re-read and sorted) by one worker. Memory
//! is the batch size plus the largest single goal, never the file. A plain regular file is read
//! positionally instead: [`BatchReader::next`] reads only the end of the next batch's range to
//! find the cut, and whoever holds the [`Next`] reads the batch (`pread`), so that several
//! threads read their batches at once; the batches are the same bytes either way.
//!
//! A line may be at most [`MAX_LINE`] bytes long: past that with no newline the reader stops with
//! an error naming the line's first byte, so that a file without line ends (a binary file, a
//! dump) cannot grow a batch without bound. A goal may be of any length: its batch holds it whole.

use crate::error::{ErrorKind, InputError};
use crate::fields::{first_field, is_space};
use crate::mapped::Stamp;
use memmap2::Mmap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::ops::{Deref, Range};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The text format of an input, sniffed from its first non-blank byte.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// Whitespace-separated TREC lines (qrels or run).
    Trec,
    /// One JSON object per line.
    Jsonl,
}

/// The compression of an input, sniffed from its magic bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Plain text.
    None,
    /// gzip (`1f 8b`), possibly multi-member.
    Gzip,
    /// zstd (`28 b5 2f fd`).
    Zstd,
}

/// An opened, decompressed input.
pub struct Input {
    /// The path as given (`-` for stdin).
    pub path: PathBuf,
    /// The decompressed bytes.
    pub reader: Source,
    /// Size on disk, when it is a regular file (for progress).
    pub size_on_disk: Option<u64>,
    /// Compression found.
    pub compression: Compression,
    /// Format sniffed from the content.
    pub format: Format,
    /// The whole file, memory-mapped, when it is a plain (uncompressed) regular file: batches are
    /// then slices of the mapping, with no copy.
    pub map: Option<Arc<Mmap>>,
    /// The file, when it is a plain (uncompressed) regular file: read without a mapping, its
    /// batches are read at their offsets ([`BatchReader::next`]), by several threads at once;
    /// mapped, it tells whether the file changed under the mapping.
    pub file: Option<Arc<File>>,
}

/// Where an input's bytes come from: a reader, or owned chunks that batches are cut from without
/// a copy. Either way it reads as one `BufRead`.
pub enum Source {
    /// Any reader (a file, a decompressor, a buffer).
    Stream(Box<dyn BufRead + Send>),
    /// Chunks handed over by their producer ([`from_chunks`]).
    Chunks(ChunkReader),
}

impl Source {
    /// A reader as a source.
    pub fn stream(r: impl BufRead + Send + 'static) -> Self {
        Source::Stream(Box::new(r))
    }
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Source::Stream(r) => r.read(buf),
            Source::Chunks(c) => c.read(buf),
        }
    }
}

impl BufRead for Source {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        match self {
            Source::Stream(r) => r.fill_buf(),
            Source::Chunks(c) => c.fill_buf(),
        }
    }
    fn consume(&mut self, n: usize) {
        match self {
            Source::Stream(r) => r.consume(n),
            Source::Chunks(c) => c.consume(n),
        }
    }
}

/// A producer of owned chunks of bytes (an async task's reads, say), in order.
pub trait ChunkSource: Send {
    /// The next chunk, or `Ok(None)` at the end (an empty chunk is the end too). `spent` holds
    /// buffers the consumer is done with: the producer takes those it will reuse, the rest are
    /// dropped.
    fn next_chunk(&mut self, spent: &mut Vec<Vec<u8>>) -> std::io::Result<Option<Vec<u8>>>;
}

/// Chunks read as one stream; a [`BatchReader`] takes whole chunks from it instead.
pub struct ChunkReader {
    src: Box<dyn ChunkSource>,
    chunk: Vec<u8>,
    at: usize,
    end: bool,
    spent: Vec<Vec<u8>>,
    /// Bytes received from the producer.
    bytes: u64,
}

impl ChunkReader {
    /// Reads `src`'s chunks.
    pub fn new(src: Box<dyn ChunkSource>) -> Self {
        ChunkReader {
            src,
            chunk: Vec::new(),
            at: 0,
            end: false,
            spent: Vec::new(),
            bytes: 0,
        }
    }

    /// The unread part of the current chunk, or the next chunk, with where its unread bytes
    /// start; `spent` goes back to the producer. `Ok(None)` at the end.
    fn take(&mut self, spent: Vec<u8>) -> std::io::Result<Option<(Vec<u8>, usize)>> {
        if spent.capacity() > 0 {
            self.spent.push(spent);
        }
        let chunk = std::mem::take(&mut self.chunk);
        if self.at < chunk.len() {
            return Ok(Some((chunk, std::mem::take(&mut self.at))));
        }
        self.at = 0;
        if chunk.capacity() > 0 {
            self.spent.push(chunk);
        }
        if self.end {
            return Ok(None);
        }
        let next = self.src.next_chunk(&mut self.spent);
        // What the producer left is dropped.
        self.spent.clear();
        match next? {
            Some(c) if !c.is_empty() => {
                self.bytes += c.len() as u64;
                Ok(Some((c, 0)))
            }
            _ => {
                self.end = true;
                Ok(None)
            }
        }
    }

    /// Puts a chunk's unread bytes back (read before any other).
    fn put_back(&mut self, chunk: Vec<u8>, at: usize) {
        debug_assert!(self.at == self.chunk.len());
        self.chunk = chunk;
        self.at = at;
    }
}

impl BufRead for ChunkReader {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.at == self.chunk.len() {
            match self.take(Vec::new())? {
                Some((c, at)) => self.put_back(c, at),
                None => return Ok(&[]),
            }
        }
        Ok(&self.chunk[self.at..])
    }
    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.chunk.len());
    }
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let have = self.fill_buf()?;
        let n = have.len().min(buf.len());
        buf[..n].copy_from_slice(&have[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// A mapping as a byte slice (for `Cursor`).
#[derive(Clone)]
struct MapBytes(Arc<Mmap>);

impl AsRef<[u8]> for MapBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Buffer of a decompressor's output.
const READ_BUF: usize = 1 << 20;
/// Buffer of the raw file (sniffing, and a decompressor's input). Small on purpose: a read of at
/// least this size into an empty buffer goes straight from the kernel to the batch (no second
/// copy), and batch reads are megabytes.
const RAW_BUF: usize = 64 << 10;

/// Opens `path` (`-` is stdin), decompresses by magic bytes and sniffs the format, for chunked
/// reading. An empty input is an error.
pub fn open(path: &Path) -> Result<Input, InputError> {
    open_with(path, false)
}

/// Whether `path` can be read only once: `-` (stdin) or anything that is not a regular file (a
/// pipe, a FIFO, `/dev/stdin`, a shell's `<(...)`, a device). Such an input is never read to be
/// recognised and then opened again (what was read would be lost), and a run that must be
/// sorted is sorted from its first read.
pub fn read_once(path: &Path) -> bool {
    path == Path::new("-") || std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

/// [`open`], choosing whether a plain regular file may be memory-mapped (batches are then slices of
/// the mapping, released with `MADV_DONTNEED` once evaluated). A mapped file that changes while it
/// is read (grown, cut short, rewritten) is an error once it has been read
/// ([`BatchReader::check_unchanged`]); one cut short raises SIGBUS on a page past its new end
/// ([`crate::describe_fault`] names it).
pub fn open_with(path: &Path, allow_mmap: bool) -> Result<Input, InputError> {
    if path == Path::new("-") {
        let mut input = from_reader(path, Box::new(std::io::stdin()))?;
        input.size_on_disk = None;
        return Ok(input);
    }
    let f = File::open(path)
        .map_err(|e| InputError::file(ErrorKind::Io, path, format!("cannot open: {e}")))?;
    open_file(path, f, allow_mmap)
}

/// [`open_with`] for a file already open (read from its start); `path` names it in errors.
pub fn open_file(path: &Path, f: File, allow_mmap: bool) -> Result<Input, InputError> {
    let io_err = |e: std::io::Error| InputError::read(path, e);
    let positional: Option<File>;
    let (raw, size): (Box<dyn Read + Send>, Option<u64>) = {
        let meta = f.metadata().map_err(io_err)?;
        if meta.is_dir() {
            return Err(InputError::file(
                ErrorKind::Io,
                path,
                "is a directory, expected a file",
            ));
        }
        if allow_mmap && meta.is_file() && meta.len() > 0 {
            // SAFETY: the mapping is read-only and private; lemma-eval never writes through it. A
            // file changed under it is found once it has been read (its length and time, kept
            // with `file`) or, cut short, reported on SIGBUS.
            if let Ok(map) = unsafe { crate::mapped::map(&f, path) } {
                if compression_of(&map) == Compression::None {
                    refuse_bom(path, &map)?;
                    let _ = map.advise(memmap2::Advice::Sequential);
                    let map = Arc::new(map);
                    let format = sniff(&map).ok_or_else(|| {
                        InputError::file(
                            ErrorKind::Empty,
                            path,
                            "is empty, expected at least one line",
                        )
                    })?;
                    return Ok(Input {
                        path: path.to_path_buf(),
                        reader: Source::stream(std::io::Cursor::new(MapBytes(map.clone()))),
                        size_on_disk: Some(meta.len()),
                        compression: Compression::None,
                        format,
                        map: Some(map),
                        // Kept to tell whether the file changed under the mapping.
                        file: Some(Arc::new(f)),
                    });
                }
            }
        }
        advise_streaming(&f);
        // A second handle for positional reads of a plain regular file (`pread` ignores the
        // shared offset that the sniffing reader below moves). Not for a file that says it is
        // empty (procfs and the like have content all the same): it is streamed.
        positional = (meta.is_file() && meta.len() > 0)
            .then(|| f.try_clone().ok())
            .flatten();
        (Box::new(f), Some(meta.len()))
    };
    let mut input = from_reader(path, raw)?;
    input.size_on_disk = size;
    if cfg!(unix) && input.compression == Compression::None {
        input.file = positional.map(Arc::new);
    }
    Ok(input)
}

/// An input read from `raw` (a pipe, a socket, an in-memory buffer), decompressed by magic bytes
/// and sniffed like a file's; `path` names it in errors. An empty input is an error.
pub fn from_reader(path: &Path, mut raw: Box<dyn Read + Send>) -> Result<Input, InputError> {
    // A pipe may hand over its first bytes a few at a time: the first four (a gzip or zstd
    // magic number, a byte order mark) are read whole before anything looks at them.
    let mut head = [0u8; 4];
    let mut n = 0;
    while n < head.len() {
        match raw.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(InputError::read(path, e)),
        }
    }
    let raw = std::io::Cursor::new(head[..n].to_vec()).chain(raw);
    sniffed(path, BufReader::with_capacity(RAW_BUF, raw), Source::stream)
}

/// An input made of `src`'s chunks, decompressed and sniffed like a file's; `path` names it in
/// errors. A plain input's batches are cut from the chunks themselves, with no copy (the lines of
/// a goal that straddles two chunks excepted). An empty input is an error.
pub fn from_chunks(path: &Path, src: Box<dyn ChunkSource>) -> Result<Input, InputError> {
    sniffed(path, ChunkReader::new(src), Source::Chunks)
}

/// Recognises `raw`'s compression and format; `plain` makes the source of uncompressed bytes.
fn sniffed<R: BufRead + Send + 'static>(
    path: &Path,
    mut raw: R,
    plain: fn(R) -> Source,
) -> Result<Input, InputError> {
    let io_err = |e: std::io::Error| InputError::read(path, e);
    let head = raw.fill_buf().map_err(io_err)?;
    let compression = compression_of(head);
    let mut reader = match compression {
        Compression::None => plain(raw),
        Compression::Gzip => {
            Source::stream(BufReader::with_capacity(READ_BUF, GzMembers::new(raw)))
        }
        Compression::Zstd => Source::stream(BufReader::with_capacity(
            READ_BUF,
            zstd::stream::read::Decoder::with_buffer(raw).map_err(io_err)?,
        )),
    };
    refuse_bom(path, reader.fill_buf().map_err(io_err)?)?;
    // Sniff: the first non-blank byte. Read ahead until one appears or the input ends.
    let format = loop {
        let buf = reader.fill_buf().map_err(io_err)?;
        if buf.is_empty() {
            return Err(InputError::file(
                ErrorKind::Empty,
                path,
                "is empty, expected at least one line",
            ));
        }
        match sniff(buf) {
            Some(f) => break f,
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    };
    Ok(Input {
        path: path.to_path_buf(),
        reader,
        size_on_disk: None,
        compression,
        format,
        map: None,
        file: None,
    })
}

/// The compression an input's first bytes say: gzip (`1f 8b`), zstd (a frame, `28 b5 2f fd`, or
/// a skippable frame, `5X 2a 4d 18`, as `pzstd` writes first), or none.
fn compression_of(head: &[u8]) -> Compression {
    if head.starts_with(&[0x1f, 0x8b]) {
        Compression::Gzip
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
        || (head.len() >= 4 && head[0] & 0xf0 == 0x50 && head[1..4] == [0x2a, 0x4d, 0x18])
    {
        Compression::Zstd
    } else {
        Compression::None
    }
}

/// gzip members one after the other, as `gzip -d` reads them: a member's end is followed by the
/// next member, by the end of the input, or by zero bytes to the end (padding, as tape and block
/// devices leave: ignored). Anything else after a member is an error saying what it is.
struct GzMembers<R: BufRead> {
    /// The member being read, or the input after one (`None` once it has ended).
    state: Option<GzState<R>>,
}

enum GzState<R: BufRead> {
    Member(flate2::bufread::GzDecoder<R>),
    /// After a member; `padded` once zero bytes were met (then only zeros may follow).
    After {
        raw: R,
        padded: bool,
    },
}

impl<R: BufRead> GzMembers<R> {
    fn new(raw: R) -> Self {
        GzMembers {
            state: Some(GzState::Member(flate2::bufread::GzDecoder::new(raw))),
        }
    }
}

impl<R: BufRead> Read for GzMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match self.state.take() {
                None => return Ok(0),
                Some(GzState::Member(mut d)) => {
                    let n = d.read(buf)?;
                    if n > 0 {
                        self.state = Some(GzState::Member(d));
                        return Ok(n);
                    }
                    let raw = d.into_inner();
                    self.state = Some(GzState::After { raw, padded: false });
                }
                Some(GzState::After { mut raw, padded }) => {
                    let head = raw.fill_buf()?;
                    if head.is_empty() {
                        return Ok(0);
                    }
                    if !padded && head[0] == 0x1f {
                        self.state = Some(GzState::Member(flate2::bufread::GzDecoder::new(raw)));
                        continue;
                    }
                    let zeros = head.iter().take_while(|&&b| b == 0).count();
                    if zeros == 0 {
                        let (after, expected) = if padded {
                            ("after zero bytes of padding", "")
                        } else {
                            ("after a gzip member", "another member (1f 8b) or ")
                        };
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            format!(
                                "{after}, byte {:#04x}: expected {expected}zero bytes to the end",
                                head[0]
                            ),
                        ));
                    }
                    raw.consume(zeros);
                    self.state = Some(GzState::After { raw, padded: true });
                }
            }
        }
    }
}

/// Tells the kernel that a file is read once, front to back: read ahead further
/// (`POSIX_FADV_SEQUENTIAL`), and do not promote its cached pages as if they were in use
/// (`POSIX_FADV_NOREUSE`, Linux 6.3: the page-cache bookkeeping of every read was about a tenth of
/// the run's CPU time on the M workload). Advice only: refused or ignored, nothing changes.
fn advise_streaming(f: &File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        for advice in [libc::POSIX_FADV_SEQUENTIAL, libc::POSIX_FADV_NOREUSE] {
            // SAFETY: an open file's descriptor; fadvise reads no memory of ours.
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, advice) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = f;
}

/// An error for text that starts with a UTF-8 byte order mark: TREC would take it as part of the
/// first goal's name (a goal then matched by no other file) and JSONL as a stray character.
pub(crate) fn refuse_bom(path: &Path, head: &[u8]) -> Result<(), InputError> {
    if !head.starts_with(b"\xEF\xBB\xBF") {
        return Ok(());
    }
    Err(InputError::at(
        ErrorKind::Syntax,
        path,
        1,
        0,
        "starts with a UTF-8 byte order mark (bytes EF BB BF), expected text without one (save \
         it as UTF-8 without a BOM, or strip its first three bytes)",
    ))
}

/// The format from the first non-blank byte, if any.
fn sniff(buf: &[u8]) -> Option<Format> {
    let i = buf.iter().position(|&b| !is_space(b) && b != b'\n')?;
    Some(if buf[i] == b'{' {
        Format::Jsonl
    } else {
        Format::Trec
    })
}

/// How lines are grouped into goals when cutting batches.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GoalKey {
    /// The first whitespace-separated field (TREC).
    FirstField,
    /// Every line is a goal of its own (JSONL).
    Line,
}

/// The bytes of a batch: an owned buffer (streams) or a slice of the mapped file.
pub enum BatchData {
    /// Read from a stream; the buffer can be recycled.
    Owned(Vec<u8>),
    /// A range of a memory-mapped file.
    Mapped(Arc<Mmap>, Range<usize>),
    /// A range of an owned buffer (a chunk); the buffer can be recycled.
    Part(Vec<u8>, Range<usize>),
}

impl Default for BatchData {
    fn default() -> Self {
        BatchData::Owned(Vec::new())
    }
}

impl std::fmt::Debug for BatchData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BatchData::Owned(v) => write!(f, "Owned({} bytes)", v.len()),
            BatchData::Mapped(_, r) => write!(f, "Mapped({r:?})"),
            BatchData::Part(_, r) => write!(f, "Part({r:?})"),
        }
    }
}

impl Deref for BatchData {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            BatchData::Owned(v) => v,
            BatchData::Mapped(m, r) => &m[r.clone()],
            BatchData::Part(v, r) => &v[r.clone()],
        }
    }
}

/// How far a reader walking a mapping goes before it lets the pages behind it go
/// (`PagesBehind`): the file pages resident at once, per reader, are at most this much (plus
/// the kernel's 64 KiB of fault-around). Each release is one `madvise` that briefly stops every
/// core's use of the mapping, so not per line: over 550 MB of qrels, 8 MiB is about 70 calls.
/// The README's memory formula counts this per reading thread.
pub const RELEASE_EVERY: usize = 8 << 20;

/// Lets a mapping's pages go behind a reader that walks it forward, [`RELEASE_EVERY`] bytes at
/// a time; does nothing for bytes that are not mapped.
pub(crate) struct PagesBehind<'a> {
    map: Option<&'a Mmap>,
    released: usize,
}

impl<'a> PagesBehind<'a> {
    /// Nothing released yet before `start`, where the reader begins.
    pub(crate) fn new(map: Option<&'a Mmap>, start: usize) -> Self {
        PagesBehind {
            map,
            released: start,
        }
    }

    /// The reader is at `pos`: the pages before it go once `RELEASE_EVERY` bytes have gathered.
    #[inline]
    pub(crate) fn at(&mut self, pos: usize) {
        if let (Some(m), true) = (self.map, pos - self.released >= RELEASE_EVERY) {
            drop_pages(m, self.released..pos);
            self.released = pos;
        }
    }
}

/// Tells the kernel that the pages covering `range` of a read-only file mapping are no longer
/// needed (`MADV_DONTNEED`): resident file pages stay at what is in use, and the page-table work
/// of unmapping is done now, by the caller's thread, instead of all at once when the mapping is
/// dropped.
///
/// The range is widened outward: its start down to a multiple of 64 KiB, its end to a whole
/// page. A page fault maps not only its page but the cached pages of the aligned 64 KiB around it
/// (Linux's fault-around, `fault_around_bytes`, 64 KiB by default), so the first touch of a range
/// also maps the tail of the range before it; if that range was already released, those pages
/// would stay mapped for good, about 30 KiB per boundary, which adds up with the size of the file
/// (measured: 92 MB of resident file pages over a 1.6 GB run in 1 MiB batches). Pages dropped
/// while a neighbour still reads them are simply mapped again, with the same bytes.
pub(crate) fn drop_pages(map: &Mmap, range: Range<usize>) {
    const PAGE: usize = 4096;
    const FAULT_AROUND: usize = 64 << 10;
    let start = range.start / FAULT_AROUND * FAULT_AROUND;
    let end = range.end.div_ceil(PAGE).saturating_mul(PAGE).min(map.len());
    if end > start {
        // SAFETY: a read-only file mapping that is never written: dropped pages are re-read from
        // the file when touched again, so no reader (not even one working on the neighbouring
        // range) can observe different bytes.
        let _ = unsafe {
            map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
        };
    }
}

impl BatchData {
    /// Gives the buffer back for reuse (streams), or tells the kernel the mapped pages are no longer
    /// needed so that resident memory stays at the batches in flight (mapped files).
    pub fn release(self) -> Option<Vec<u8>> {
        match self {
            BatchData::Owned(v) | BatchData::Part(v, _) => Some(v),
            BatchData::Mapped(map, r) => {
                drop_pages(&map, r);
                None
            }
        }
    }
}

/// What [`BatchReader::next`] hands out: a batch, or a plain file's batch still to be read.
#[derive(Debug)]
pub enum Next {
    /// Read (a stream) or sliced (a mapped file).
    Ready(Batch),
    /// A range of a plain file.
    Claimed(Claim),
}

impl Next {
    /// The batch's sequence number.
    pub fn index(&self) -> u64 {
        match self {
            Next::Ready(b) => b.index,
            Next::Claimed(c) => c.index,
        }
    }

    /// The batch: a claimed range is read into `buf` (its allocation taken and reused).
    pub fn read(self, buf: &mut Vec<u8>) -> Result<Batch, InputError> {
        match self {
            Next::Ready(b) => Ok(b),
            Next::Claimed(c) => c.read(std::mem::take(buf)),
        }
    }
}

/// A batch's place in a plain file, handed out by [`BatchReader::next`].
#[derive(Debug)]
pub struct Claim {
    file: Arc<File>,
    /// The file's size when it was opened.
    size: u64,
    path: PathBuf,
    index: u64,
    range: Range<u64>,
}

impl Claim {
    /// Reads the batch into `buf` (its allocation reused; only growth is zero-filled).
    fn read(self, mut buf: Vec<u8>) -> Result<Batch, InputError> {
        let len = usize::try_from(self.range.end - self.range.start).unwrap_or(usize::MAX);
        buf.resize(len, 0);
        read_at(&self.file, &mut buf, self.range.start)
            .map_err(|e| read_failed(&self.path, &self.file, self.size, e))?;
        if buf.last() != Some(&b'\n') {
            // The file's last line, without its newline.
            buf.push(b'\n');
        }
        Ok(Batch {
            index: self.index,
            first_byte: self.range.start,
            data: BatchData::Owned(buf),
        })
    }
}

/// The error for a failed read of `file` (`size` bytes when opened) at `path`: that it changed,
/// when its size moved (a file cut short reads short), else the system's reason.
fn read_failed(path: &Path, file: &File, size: u64, e: std::io::Error) -> InputError {
    match file.metadata() {
        Ok(m) if m.len() != size => crate::mapped::changed(path, size, m.len()),
        _ => InputError::read(path, e),
    }
}

/// Fills `buf` from `file` at `offset` (`pread`; a file that shrank since it was opened is an
/// error).
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(not(unix))]
    {
        let _ = (file, buf, offset);
        Err(std::io::Error::other("positional reads need a Unix system"))
    }
}

/// A block of whole goals.
#[derive(Debug, Default)]
pub struct Batch {
    /// 0-based sequence number.
    pub index: u64,
    /// Complete lines (the last one may lack its `\n` at the end of the input).
    pub data: BatchData,
    /// Byte offset of `data[0]` in the decompressed input.
    pub first_byte: u64,
}

/// The longest line a [`BatchReader`] reads (256 MiB; [`BatchReader::set_max_line`] changes it).
/// A JSONL record ranking a whole library of a million lemmas is about 60 MB.
pub const MAX_LINE: usize = 256 << 20;

/// `n` bytes as a person reads them: `256 MiB`, or `4000 bytes`.
fn show_bytes(n: usize) -> String {
    match n % (1 << 20) {
        0 => format!("{} MiB", n >> 20),
        _ => format!("{n} bytes"),
    }
}

/// A stream's batch buffer grows by at most this much per read (a goal larger than the batch
/// target makes the target double; only the bytes read are touched).
const GROW_STEP: usize = 4 << 20;

/// Cuts an input into batches of whole goals. See the module documentation.
pub struct BatchReader {
    input: Source,
    map: Option<Arc<Mmap>>,
    /// Positional reads of a plain file (see [`BatchReader::next`]), with its size at opening.
    file: Option<(Arc<File>, u64)>,
    /// A plain file (mapped or read by position) as it was: checked once it has been read.
    stamp: Option<Stamp>,
    /// The end of the range before a claimed batch's end, read to find its cut (reused).
    probe: Vec<u8>,
    /// How much of that end is read first (64 KiB; doubled until it holds a goal boundary).
    probe_first: u64,
    path: PathBuf,
    key: GoalKey,
    carry: Vec<u8>,
    target: usize,
    base_target: usize,
    next_byte: u64,
    index: u64,
    eof: bool,
    bytes_read: u64,
    max_line: usize,
    /// A chunked source's carry is checked for an over-long line once it reaches this size (then
    /// twice that: a check per chunk would read a long line back once per chunk).
    carry_check: usize,
    /// The most bytes one goal's lines may take ([`BatchReader::set_max_goal`]).
    max_goal: usize,
    /// What names `max_goal` in an error (`half of --memory, 64 MiB`).
    max_goal_name: String,
    /// Whether a lemma repeated within a goal is an error ([`BatchReader::set_repeats_fatal`]).
    repeats_fatal: bool,
    /// A goal longer than a batch, its lines checked as they arrive: how far (from the goal's
    /// start), how many lines, and the last line's lemma.
    scan: GoalScan,
}

/// The lines of a goal longer than a batch, checked as they arrive for a lemma repeated on the
/// next line.
#[derive(Default)]
struct GoalScan {
    /// Bytes of the goal checked (a line start).
    at: usize,
    /// Lines checked.
    lines: u64,
    /// The last real line's lemma, and its line (1-based, from the goal's start).
    last: Option<(Vec<u8>, u64)>,
}

/// The goal key of the first line of `lines` that has one.
pub fn first_goal(lines: &[u8]) -> Option<&[u8]> {
    lines.split(|&b| b == b'\n').find_map(first_field)
}

/// The goal key of the last line of `lines` that has one.
pub fn last_goal(lines: &[u8]) -> Option<&[u8]> {
    real_line_before(lines, lines.len()).map(|(_, _, g)| g)
}

/// Whether `line` starts a goal other than the one of `carried` (whole lines).
fn starts_goal(carried: &[u8], line: &[u8]) -> bool {
    matches!((first_goal(carried), first_field(line)), (Some(g), Some(k)) if g != k)
}

/// Where the first line with a goal other than `goal` starts in `c[from..]` (lines start at
/// `from`; with no `goal`, the first line with one sets it): `None` if none starts before the last
/// newline. Shared by chunked batches and shard boundaries.
pub(crate) fn next_goal(goal: Option<&[u8]>, c: &[u8], from: usize) -> Option<usize> {
    let mut goal = goal;
    let mut start = from;
    while let Some(p) = memchr::memchr(b'\n', &c[start..]) {
        if let Some(k) = first_field(&c[start..start + p]) {
            match goal {
                None => goal = Some(k),
                Some(g) if g != k => return Some(start),
                Some(_) => {}
            }
        }
        start += p + 1;
    }
    None
}

/// The real line (one with a goal: not blank, not a comment) that ends at `end` (the position
/// of its newline, or the buffer's end), or the nearest one before it: (start, end, goal).
fn real_line_before(buf: &[u8], mut end: usize) -> Option<(usize, usize, &[u8])> {
    loop {
        let start = line_start(buf, end);
        if let Some(g) = first_field(&buf[start..end]) {
            return Some((start, end, g));
        }
        if start == 0 {
            return None;
        }
        end = start - 1;
    }
}

/// Where the lines of the last goal of `buf` begin (`last_nl`: its last newline): just after the
/// last line of another goal (blank and comment lines between go with the last goal); `None` when
/// the buffer holds one goal. A goal's lines are contiguous, so a line of the last goal far back
/// means all lines after it are the last goal's: the search gallops back (256 bytes, then twice as
/// far each time) to a line of another goal, then halves the span between: a few dozen lines read
/// for a goal of any length, where a walk back over every line of a 100,000-line goal read them
/// all. In a file whose goals are not contiguous, a cut it finds is still where the goal changes
/// (the goal's return is reported when the batches are read), but it may miss a short run of
/// another goal and find none: past [`WALK_ABOVE`] bytes the walk over every line decides, so a
/// malformed file cannot grow a batch without bound.
fn last_goal_boundary(buf: &[u8], last_nl: usize) -> Option<usize> {
    if buf.len() > WALK_ABOVE {
        return boundary_by_walking(buf, last_nl);
    }
    let (last_start, _, goal) = real_line_before(buf, last_nl)?;
    // `hi`: the start of a line, every real line from there on `goal`'s; `lo_end`: the newline
    // ending a real line of another goal.
    let mut hi = last_start;
    let mut reach = 256usize;
    let mut lo_end = loop {
        if hi == 0 {
            return None;
        }
        let at = hi.saturating_sub(reach);
        match first_real_line(buf, at, hi) {
            Some((_, end, g)) if g != goal => break end,
            Some((start, _, _)) if at > 0 => hi = start,
            // From the buffer's first line on, every real line is `goal`'s.
            Some(_) => return None,
            None if at > 0 => hi = line_start(buf, at),
            None => return None,
        }
        reach = reach.saturating_mul(2);
    };
    // Halve the span: no line starts strictly between `lo_end + 1` and `hi` at the end.
    while lo_end + 1 < hi {
        let mid = lo_end + 1 + (hi - lo_end - 1) / 2;
        match first_real_line(buf, mid, hi) {
            Some((_, end, g)) if g != goal => lo_end = end,
            Some((start, _, _)) => hi = start,
            // Only blank or comment lines from the line holding `mid` to `hi`: they go with the
            // last goal.
            None => hi = line_start(buf, mid),
        }
    }
    Some(lo_end + 1)
}

/// Batches past this size find their cut by walking back over every line ([`last_goal_boundary`]).
const WALK_ABOVE: usize = 256 << 20;

/// The last goal boundary found by walking back over every line of the last goal.
fn boundary_by_walking(buf: &[u8], last_nl: usize) -> Option<usize> {
    let (mut start, _, goal) = real_line_before(buf, last_nl)?;
    while start > 0 {
        let (s, end, g) = real_line_before(buf, start - 1)?;
        if g != goal {
            return Some(end + 1);
        }
        start = s;
    }
    None
}

/// The start of the line holding byte `at`.
fn line_start(buf: &[u8], at: usize) -> usize {
    memchr::memrchr(b'\n', &buf[..at]).map_or(0, |p| p + 1)
}

/// The first real line from the line holding byte `at` on, starting before `hi` (a line start
/// after a newline): (start, end, goal).
fn first_real_line(buf: &[u8], at: usize, hi: usize) -> Option<(usize, usize, &[u8])> {
    let mut start = line_start(buf, at);
    while start < hi {
        let end = start + memchr::memchr(b'\n', &buf[start..hi]).expect("hi follows a newline");
        if let Some(g) = first_field(&buf[start..end]) {
            return Some((start, end, g));
        }
        start = end + 1;
    }
    None
}

impl BatchReader {
    /// Batches of about `target` bytes (grown as needed to hold the largest goal).
    pub fn new(input: Input, key: GoalKey, target: usize) -> Self {
        // A small plain file needs no batch buffer larger than itself (each new buffer is zeroed
        // once: 4 MiB of page faults is most of the cost of a tiny run).
        let target = match (input.size_on_disk, input.compression) {
            (Some(size), Compression::None) => {
                target.min(usize::try_from(size).unwrap_or(usize::MAX).max(4096))
            }
            _ => target,
        };
        let stamp = match (&input.file, &input.map, input.size_on_disk) {
            (Some(f), Some(m), _) => Some(Stamp::new(f.clone(), m.len() as u64)),
            (Some(f), None, Some(size)) => Some(Stamp::new(f.clone(), size)),
            _ => None,
        };
        let file = match (input.file, input.size_on_disk) {
            (Some(f), Some(size)) if input.map.is_none() => Some((f, size)),
            _ => None,
        };
        BatchReader {
            input: input.reader,
            map: input.map,
            file,
            stamp,
            probe: Vec::new(),
            probe_first: 64 << 10,
            path: input.path,
            key,
            carry: Vec::new(),
            target,
            base_target: target,
            next_byte: 0,
            index: 0,
            eof: false,
            bytes_read: 0,
            max_line: MAX_LINE,
            carry_check: MAX_LINE + 1,
            max_goal: usize::MAX,
            max_goal_name: String::new(),
            repeats_fatal: false,
            scan: GoalScan::default(),
        }
    }

    /// Refuses a goal whose lines take more than `bytes` (`what` names the limit in the error,
    /// `half of --memory` say): a goal is held whole in its batch, so this bounds what one goal
    /// can hold. Unlimited by default.
    pub fn set_max_goal(&mut self, bytes: usize, what: impl Into<String>) {
        self.max_goal = bytes.max(1);
        self.max_goal_name = what.into();
    }

    /// Makes a lemma on two lines in a row of one goal (TREC) an error, found as the lines of a
    /// goal longer than a batch arrive rather than once the goal is held whole: for readers of
    /// actual sets, and of predictions whose repeats are fatal.
    pub fn set_repeats_fatal(&mut self, yes: bool) {
        self.repeats_fatal = yes;
    }

    /// `buf`, the lines read so far of one goal (no goal boundary in them), starting at byte
    /// `base`: an error once they take more than the goal limit, or (when repeats are fatal)
    /// hold a lemma on two lines in a row. Lines are checked once each as the goal grows.
    fn check_goal(&mut self, buf: &[u8], base: u64) -> Result<(), InputError> {
        if self.repeats_fatal && self.key == GoalKey::FirstField {
            self.scan_repeats(buf, base)?;
        }
        if buf.len() <= self.max_goal {
            return Ok(());
        }
        let limit = show_bytes(self.max_goal);
        if memchr::memchr(b'\n', buf).is_none() {
            // One line, no end in sight: a binary file, a dump.
            return Err(InputError {
                kind: ErrorKind::Syntax,
                path: self.path.clone(),
                line: None,
                byte: Some(base),
                first_line: None,
                message: format!(
                    "a line longer than {limit} (no newline within {limit} of its start), the \
                     most one goal may hold ({}): expected lines of TREC or JSONL text; is it \
                     the right file?",
                    self.max_goal_name
                ),
            });
        }
        let goal = first_goal(buf).unwrap_or_default();
        Err(InputError {
            kind: ErrorKind::Syntax,
            path: self.path.clone(),
            line: Some(1),
            byte: Some(base),
            first_line: None,
            message: format!(
                "goal `{}` takes more than {limit} of lines, the most one goal may hold ({}): \
                 a goal is held whole while it is read; pass a larger --memory",
                crate::fields::show(goal),
                self.max_goal_name
            ),
        })
    }

    /// Checks the goal's complete lines not checked yet for a lemma repeated on the next line.
    fn scan_repeats(&mut self, buf: &[u8], base: u64) -> Result<(), InputError> {
        let end = memchr::memrchr(b'\n', buf).map_or(0, |p| p + 1);
        let mut at = self.scan.at;
        while at < end {
            let nl = at + memchr::memchr(b'\n', &buf[at..end]).expect("ends with a newline");
            let line = &buf[at..nl];
            self.scan.lines += 1;
            let mut f = [&b""[..]; 3];
            if crate::fields::split_fields(line, &mut f) >= 3 && f[0].first() != Some(&b'#') {
                if let Some((last, first)) = &self.scan.last {
                    if last[..] == *f[2] {
                        return Err(InputError {
                            kind: ErrorKind::Duplicate,
                            path: self.path.clone(),
                            line: Some(self.scan.lines),
                            byte: Some(base + at as u64),
                            first_line: Some(*first),
                            message: format!(
                                "lemma `{}` appears twice for goal `{}`",
                                crate::fields::show(f[2]),
                                crate::fields::show(f[0])
                            ),
                        });
                    }
                }
                let last = self.scan.last.get_or_insert_with(|| (Vec::new(), 0));
                last.0.clear();
                last.0.extend_from_slice(f[2]);
                last.1 = self.scan.lines;
            }
            at = nl + 1;
        }
        self.scan.at = at;
        Ok(())
    }

    /// The most a batch holding one goal may grow to: one byte past the goal limit (where the
    /// goal is refused).
    fn goal_cap(&self, len: usize) -> usize {
        self.max_goal.saturating_add(1).max(len + 1)
    }

    /// Refuses lines longer than `bytes` (256 MiB by default).
    pub fn set_max_line(&mut self, bytes: usize) {
        self.max_line = bytes.max(1);
        self.carry_check = self.max_line + 1;
    }

    /// After a chunk was added to the carry: its open line checked at doubling sizes.
    fn check_carry(&mut self) -> Result<(), InputError> {
        if self.carry.len() >= self.carry_check || self.carry.len() > self.max_goal {
            self.open_line(&self.carry, self.next_byte)?;
            let carry = std::mem::take(&mut self.carry);
            let checked = self.check_goal(&carry, self.next_byte);
            self.carry = carry;
            checked?;
            self.carry_check = self.carry.len().saturating_mul(2);
        }
        Ok(())
    }

    /// The line still open at the end of `buf` (the bytes after its last newline), whose first
    /// byte is at `base` in the input: an error once it is longer than the limit. `Ok`: where it
    /// starts in `buf`. Reads back from the end at most one line's limit (more on the error path).
    fn open_line(&self, buf: &[u8], base: u64) -> Result<usize, InputError> {
        let window = buf.len().saturating_sub(self.max_line + 1);
        if let Some(p) = memchr::memrchr(b'\n', &buf[window..]) {
            return Ok(window + p + 1);
        }
        if buf.len() <= self.max_line {
            return Ok(0);
        }
        let start = memchr::memrchr(b'\n', &buf[..window]).map_or(0, |p| p + 1);
        let limit = show_bytes(self.max_line);
        Err(InputError {
            kind: ErrorKind::Syntax,
            path: self.path.clone(),
            line: None,
            byte: Some(base + start as u64),
            first_line: None,
            message: format!(
                "a line longer than {limit} (no newline within {limit} of its start): expected \
                 lines of TREC or JSONL text; is it the right file?"
            ),
        })
    }

    /// The next target when a batch of `len` bytes holds no cut: twice the current, but no
    /// more than a line's limit past the start `open` of its last (unfinished) line.
    fn grown_target(&self, len: usize, open: usize) -> usize {
        let cap = open
            .saturating_add(self.max_line)
            .saturating_add(1)
            .max(len + 1);
        self.target
            .saturating_mul(2)
            .min(cap)
            .min(self.goal_cap(len))
    }

    /// Starts at byte `byte`, a goal's first line, of a plain file (mapped or read by position):
    /// `false`, nothing changed, for a stream or once batches were read.
    pub fn start_at(&mut self, byte: u64) -> bool {
        let plain = self.map.is_some() || self.file.is_some();
        if !plain || self.index > 0 {
            return false;
        }
        self.next_byte = byte;
        self.bytes_read = byte;
        true
    }

    /// An error if the plain file read (mapped, or by position) is no longer as it was when it
    /// was opened: its length or modification time moved. A stream is never checked. Checked at
    /// its end by the reader itself; the evaluation asks again at its own end (its workers read
    /// ahead of the rows written, so a change may land after the last read), and a caller whose
    /// evaluation failed asks too, as an error in lines that changed under the reader is better
    /// told as the change.
    pub fn check_unchanged(&self) -> Result<(), InputError> {
        match &self.stamp {
            Some(s) => s.check(&self.path),
            None => Ok(()),
        }
    }

    /// Decompressed bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The sequence number the next batch will have.
    pub fn next_index(&self) -> u64 {
        self.index
    }

    /// The next batch, reusing `buf`'s allocation. `Ok(None)` at the end.
    pub fn next_batch(&mut self, mut buf: Vec<u8>) -> Result<Option<Batch>, InputError> {
        match self.next(&mut buf)? {
            Some(next) => next.read(&mut buf).map(Some),
            None => Ok(None),
        }
    }

    /// The next batch, or for a plain file only its place: [`Next::read`] then gives the batch,
    /// reading a plain file's bytes (`pread`) into `buf`, so that a caller handing out batches
    /// under a lock can read them outside it, several threads at once. Streams are read here,
    /// into `buf` (its allocation taken); mapped files are sliced. `Ok(None)` at the end.
    pub fn next(&mut self, buf: &mut Vec<u8>) -> Result<Option<Next>, InputError> {
        if let Some(map) = self.map.clone() {
            return Ok(self.next_mapped(&map)?.map(Next::Ready));
        }
        if self.file.is_some() {
            return Ok(self.claim()?.map(Next::Claimed));
        }
        let buf = std::mem::take(buf);
        let batch = if matches!(self.input, Source::Chunks(_)) {
            self.next_chunked(buf)?
        } else {
            self.next_streamed(buf)?
        };
        Ok(batch.map(Next::Ready))
    }

    /// The next batch of a chunked source: a range of a chunk, cut at its last goal boundary, or
    /// the goal carried over from the chunks before, completed by the lines that start the next.
    /// `spent` goes back to the producer.
    fn next_chunked(&mut self, spent: Vec<u8>) -> Result<Option<Batch>, InputError> {
        let mut spent = spent;
        loop {
            let Some((c, at)) = self
                .chunk_reader()
                .take(std::mem::take(&mut spent))
                .map_err(|e| InputError::read(&self.path, e))?
            else {
                self.eof = true;
                if self.carry.is_empty() {
                    return Ok(None);
                }
                let mut last = std::mem::take(&mut self.carry);
                if last.last() != Some(&b'\n') {
                    last.push(b'\n');
                }
                return Ok(Some(self.emit(last)));
            };
            self.bytes_read = self.chunk_reader().bytes;
            if self.carry.is_empty() {
                match self.cut(&c[at..]) {
                    Some(cut) => {
                        self.carry.extend_from_slice(&c[at + cut..]);
                        return Ok(Some(self.emit(BatchData::Part(c, at..at + cut))));
                    }
                    None => {
                        // No goal ends in the chunk: carried whole.
                        self.carry.extend_from_slice(&c[at..]);
                        self.check_carry()?;
                        spent = c;
                        continue;
                    }
                }
            }
            // The carried goal's end: after its partial last line's rest, the first line of
            // another goal (JSONL: that line's end).
            let mut from = at;
            if self.carry.last() != Some(&b'\n') {
                let line_start = memchr::memrchr(b'\n', &self.carry).map_or(0, |p| p + 1);
                match memchr::memchr(b'\n', &c[from..]) {
                    Some(p) => {
                        self.carry.extend_from_slice(&c[from..from + p + 1]);
                        from += p + 1;
                        // The completed line may start another goal: the carried goal ends
                        // before it.
                        if self.key == GoalKey::FirstField
                            && starts_goal(
                                &self.carry[..line_start],
                                &self.carry[line_start..self.carry.len() - 1],
                            )
                        {
                            let rest = self.carry.split_off(line_start);
                            let goal = std::mem::replace(&mut self.carry, rest);
                            self.chunk_reader().put_back(c, from);
                            return Ok(Some(self.emit(goal)));
                        }
                    }
                    None => {
                        self.carry.extend_from_slice(&c[from..]);
                        self.check_carry()?;
                        spent = c;
                        continue;
                    }
                }
            }
            let end = match self.key {
                GoalKey::Line => Some(from),
                GoalKey::FirstField => next_goal(first_goal(&self.carry), &c, from),
            };
            match end {
                Some(end) => {
                    self.carry.extend_from_slice(&c[from..end]);
                    self.chunk_reader().put_back(c, end);
                    let goal = std::mem::take(&mut self.carry);
                    return Ok(Some(self.emit(goal)));
                }
                None => {
                    self.carry.extend_from_slice(&c[from..]);
                    spent = c;
                }
            }
        }
    }

    /// The chunked source.
    fn chunk_reader(&mut self) -> &mut ChunkReader {
        match &mut self.input {
            Source::Chunks(c) => c,
            Source::Stream(_) => unreachable!("called for chunked sources only"),
        }
    }

    /// The next batch of a stream: read into `buf`, the last goal's lines carried over.
    fn next_streamed(&mut self, mut buf: Vec<u8>) -> Result<Option<Batch>, InputError> {
        // A recycled buffer keeps its length: its stale bytes are overwritten by the reads below,
        // so only growth is ever zero-filled (no memset of every batch).
        let carry = self.carry.len();
        if buf.len() < carry {
            buf.resize(carry, 0);
        }
        buf[..carry].copy_from_slice(&self.carry);
        self.carry.clear();
        let mut filled = carry;
        loop {
            while filled < self.target && !self.eof {
                // Grown as it fills (a large goal's target is not touched beyond what is read).
                let want = self.target.min(filled.saturating_add(GROW_STEP));
                if buf.len() < want {
                    buf.resize(want, 0);
                }
                // Straight into the batch buffer: the readers' buffers pass reads of their size or
                // more through.
                match self.input.read(&mut buf[filled..want]) {
                    Ok(0) => self.eof = true,
                    Ok(n) => {
                        filled += n;
                        self.bytes_read += n as u64;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(InputError::read(&self.path, e)),
                }
            }
            buf.truncate(filled);
            if self.eof {
                if buf.is_empty() {
                    return Ok(None);
                }
                self.open_line(&buf, self.next_byte)?;
                if buf.last() != Some(&b'\n') {
                    buf.push(b'\n');
                }
                return Ok(Some(self.emit(buf)));
            }
            let Some(cut) = self.cut(&buf) else {
                // The whole block is one goal (or one line): read more.
                let open = self.open_line(&buf, self.next_byte)?;
                self.check_goal(&buf, self.next_byte)?;
                self.target = self.grown_target(buf.len(), open);
                continue;
            };
            self.carry.extend_from_slice(&buf[cut..]);
            buf.truncate(cut);
            self.target = self.base_target;
            return Ok(Some(self.emit(buf)));
        }
    }

    /// The next batch's byte range in a plain file, cut at a goal boundary, without reading the
    /// batch: only the end of the range (64 KiB, more if the last goal is longer) is read, to find
    /// the cut. `Ok(None)` at the end; for a reader that is not positional, always `Ok(None)`.
    fn claim(&mut self) -> Result<Option<Claim>, InputError> {
        let Some((file, size)) = self.file.clone() else {
            return Ok(None);
        };
        let start = self.next_byte;
        if start >= size {
            // The batches cover the size the file had when it was opened: one that changed since
            // (appended to while read, say) would have been cut short, perhaps mid-line.
            self.check_unchanged()?;
            return Ok(None);
        }
        let mut target = (self.base_target as u64).max(1);
        let mut probe = self.probe_first.max(1);
        let end = loop {
            let end = start.saturating_add(target);
            if end >= size {
                break size;
            }
            // The last `probe` bytes before `end`: their last goal boundary, past the first
            // (partial) line unless they begin the batch.
            let from = end.saturating_sub(probe).max(start);
            self.probe.resize((end - from) as usize, 0);
            read_at(&file, &mut self.probe, from)
                .map_err(|e| read_failed(&self.path, &file, size, e))?;
            let skip = if from == start {
                Some(0)
            } else {
                memchr::memchr(b'\n', &self.probe).map(|p| p + 1)
            };
            if let Some(cut) = skip.and_then(|k| self.cut(&self.probe[k..]).map(|c| k + c)) {
                break from + cut as u64;
            }
            if from == start {
                // One goal (or line) fills the whole range: a longer batch.
                let open = self.open_line(&self.probe, start)?;
                let held = std::mem::take(&mut self.probe);
                let checked = self.check_goal(&held, start);
                self.probe = held;
                checked?;
                let cap = (open as u64)
                    .saturating_add(self.max_line as u64 + 1)
                    .max(target + 1)
                    .min(self.goal_cap(target as usize) as u64);
                target = target.saturating_mul(2).min(cap);
                probe = self.probe_first.max(1);
            } else {
                probe = probe.saturating_mul(2);
            }
        };
        if self.probe.capacity() > 1 << 20 {
            // A long goal's probe: not kept for the rest of the run.
            self.probe = Vec::new();
        }
        let claim = Claim {
            file,
            size,
            path: self.path.clone(),
            index: self.index,
            range: start..end,
        };
        self.index += 1;
        self.next_byte = end;
        self.bytes_read = end;
        if self.scan.at > 0 {
            self.scan = GoalScan::default();
        }
        Ok(Some(claim))
    }

    /// The next batch of a mapped file: a slice cut at a goal boundary, no copy.
    fn next_mapped(&mut self, map: &Arc<Mmap>) -> Result<Option<Batch>, InputError> {
        let start = self.next_byte as usize;
        if start >= map.len() {
            // Lines appended under the mapping were never seen, and a file cut short read as
            // zeros past its new end (within its last page): either way, an error.
            self.check_unchanged()?;
            return Ok(None);
        }
        let mut target = self.base_target;
        let end = loop {
            let end = start.saturating_add(target).min(map.len());
            if end == map.len() {
                // The last batch: a file already cut short is not read as zeros.
                self.check_unchanged()?;
                self.open_line(&map[start..end], start as u64)?;
                break end;
            }
            match self.cut(&map[start..end]) {
                Some(c) => break start + c,
                None => {
                    let open = self.open_line(&map[start..end], start as u64)?;
                    self.check_goal(&map[start..end], start as u64)?;
                    let cap = (open.saturating_add(self.max_line + 1).max(target + 1))
                        .min(self.goal_cap(end - start));
                    target = target.saturating_mul(2).min(cap);
                }
            }
        };
        self.bytes_read = end as u64;
        Ok(Some(self.emit(BatchData::Mapped(map.clone(), start..end))))
    }

    fn emit(&mut self, data: impl Into<BatchData>) -> Batch {
        self.carry_check = self.max_line + 1;
        if self.scan.at > 0 {
            self.scan = GoalScan::default();
        }
        let data = data.into();
        let b = Batch {
            index: self.index,
            first_byte: self.next_byte,
            data,
        };
        self.index += 1;
        self.next_byte += b.data.len() as u64;
        b
    }

    /// Where to cut `buf`: after a newline, and for TREC before the lines of the last goal.
    fn cut(&self, buf: &[u8]) -> Option<usize> {
        let last_nl = memchr::memrchr(b'\n', buf)?;
        match self.key {
            GoalKey::Line => Some(last_nl + 1),
            GoalKey::FirstField => last_goal_boundary(buf, last_nl),
        }
    }
}

impl From<Vec<u8>> for BatchData {
    fn from(v: Vec<u8>) -> Self {
        BatchData::Owned(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn input_of(bytes: &[u8]) -> Input {
        Input {
            path: "t".into(),
            reader: Source::stream(std::io::Cursor::new(bytes.to_vec())),
            size_on_disk: None,
            compression: Compression::None,
            format: Format::Trec,
            map: None,
            file: None,
        }
    }

    fn batches(text: &str, target: usize) -> Vec<String> {
        let mut r = BatchReader::new(input_of(text.as_bytes()), GoalKey::FirstField, target);
        let mut out = Vec::new();
        while let Some(b) = r.next_batch(Vec::new()).unwrap() {
            out.push(String::from_utf8(b.data.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn mapped_batches_hold_whole_goals_without_copy() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run");
        let text =
            "a Q0 x 1 1 t\na Q0 y 2 0 t\nb Q0 x 1 1 t\nb Q0 y 2 0 t\nb Q0 z 3 0 t\nc Q0 x 1 1 t";
        std::fs::write(&p, text).unwrap();
        for target in [1, 5, 13, 26, 40, 1000] {
            let input = open_with(&p, true).unwrap();
            assert!(input.map.is_some());
            let mut r = BatchReader::new(input, GoalKey::FirstField, target);
            let mut all = String::new();
            let mut first_goals = Vec::new();
            while let Some(b) = r.next_batch(Vec::new()).unwrap() {
                assert!(matches!(b.data, BatchData::Mapped(..)));
                let s = std::str::from_utf8(&b.data).unwrap().to_string();
                first_goals.push(s.split(' ').next().unwrap().to_string());
                all += &s;
                assert!(b.data.release().is_none());
            }
            assert_eq!(all, text, "target {target}");
            let mut dedup = first_goals.clone();
            dedup.dedup();
            assert_eq!(
                dedup, first_goals,
                "a goal spans two batches (target {target})"
            );
        }
    }

    #[test]
    fn batches_hold_whole_goals() {
        let text =
            "a Q0 x 1 1 t\na Q0 y 2 0 t\nb Q0 x 1 1 t\nb Q0 y 2 0 t\nb Q0 z 3 0 t\nc Q0 x 1 1 t";
        for target in [1, 5, 13, 26, 40, 1000] {
            let bs = batches(text, target);
            assert_eq!(bs.concat(), format!("{text}\n"), "target {target}");
            for b in &bs {
                // No goal is split across batches.
                let goals: Vec<&str> = b.lines().map(|l| l.split(' ').next().unwrap()).collect();
                for other in &bs {
                    if !std::ptr::eq(b, other) {
                        assert!(other
                            .lines()
                            .all(|l| !goals.contains(&l.split(' ').next().unwrap())));
                    }
                }
            }
        }
    }

    /// Texts of many shapes: goals of 1 to 40 lines, comment and blank lines, lines of 1 to 200
    /// bytes, with or without a final newline.
    fn shaped_texts() -> Vec<String> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        (0..40)
            .map(|t| {
                let mut s = String::new();
                for g in 0..1 + next(12) {
                    for l in 0..1 + next(40) {
                        match next(20) {
                            0 => s += "# a comment\n",
                            1 => s += "\n",
                            _ => {}
                        }
                        let pad = "x".repeat(next(if t % 3 == 0 { 200 } else { 20 }) as usize);
                        s += &format!("g{g} Q0 l{l}{pad} {l} 1.5 run\n");
                    }
                }
                if t % 2 == 1 {
                    s.pop();
                }
                s
            })
            .collect()
    }

    /// A text's bytes as chunks of the given sizes (cycled), written into spent buffers when
    /// there are any (stale bytes in them must never reach a batch).
    struct Chunked {
        text: Vec<u8>,
        at: usize,
        sizes: Vec<usize>,
        turn: usize,
        reused: usize,
    }

    impl ChunkSource for Chunked {
        fn next_chunk(&mut self, spent: &mut Vec<Vec<u8>>) -> std::io::Result<Option<Vec<u8>>> {
            if self.at == self.text.len() {
                return Ok(None);
            }
            let n = self.sizes[self.turn % self.sizes.len()].min(self.text.len() - self.at);
            self.turn += 1;
            let mut c = match spent.pop() {
                Some(mut b) => {
                    self.reused += 1;
                    b.fill(b'#');
                    b.clear();
                    b
                }
                None => Vec::new(),
            };
            c.extend_from_slice(&self.text[self.at..self.at + n]);
            self.at += n;
            Ok(Some(c))
        }
    }

    #[test]
    fn chunked_batches_hold_whole_goals() {
        let jsonl =
            "{\"goal\": \"a\", \"ranked\": [\"x\"]}\n\n{\"goal\": \"b\"}\n{\"goal\": \"c\"}";
        let mut texts: Vec<(String, GoalKey)> = shaped_texts()
            .into_iter()
            .map(|t| (t, GoalKey::FirstField))
            .collect();
        texts.push((jsonl.to_string(), GoalKey::Line));
        for (text, key) in &texts {
            for sizes in [
                vec![1],
                vec![3, 17],
                vec![64, 5, 300],
                vec![1000],
                vec![1 << 20],
            ] {
                let src = Chunked {
                    text: text.as_bytes().to_vec(),
                    at: 0,
                    sizes: sizes.clone(),
                    turn: 0,
                    reused: 0,
                };
                let input = from_chunks(Path::new("t"), Box::new(src)).unwrap();
                assert!(matches!(input.reader, Source::Chunks(_)));
                let mut r = BatchReader::new(input, *key, 1 << 20);
                let (mut got, mut buf, mut first_byte) = (Vec::<String>::new(), Vec::new(), 0);
                while let Some(next) = r.next(&mut buf).unwrap() {
                    let b = next.read(&mut buf).unwrap();
                    assert_eq!(b.index, got.len() as u64);
                    assert_eq!(b.first_byte, first_byte);
                    first_byte += b.data.len() as u64;
                    got.push(String::from_utf8(b.data.to_vec()).unwrap());
                    buf = b.data.release().unwrap();
                }
                let ctx = format!("sizes {sizes:?}: {text:?}");
                let mut want = text.clone();
                if !want.ends_with('\n') {
                    want.push('\n');
                }
                assert_eq!(got.concat(), want, "{ctx}");
                assert_eq!(r.bytes_read(), text.len() as u64, "{ctx}");
                // Whole lines, and (TREC) no goal in two batches.
                let mut owner = std::collections::HashMap::new();
                for (i, b) in got.iter().enumerate() {
                    assert!(b.ends_with('\n'), "{ctx}");
                    if *key == GoalKey::FirstField {
                        for g in b.lines().filter_map(|l| first_field(l.as_bytes())) {
                            assert_eq!(*owner.entry(g.to_vec()).or_insert(i), i, "{ctx}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn chunked_input_sniffs_and_reads_compressed_chunks() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"q 0 a 1\nq 0 b 0\nr 0 c 2\n").unwrap();
        let src = Chunked {
            text: gz.finish().unwrap(),
            at: 0,
            sizes: vec![7],
            turn: 0,
            reused: 0,
        };
        let mut input = from_chunks(Path::new("t.gz"), Box::new(src)).unwrap();
        assert_eq!(input.compression, Compression::Gzip);
        assert_eq!(input.format, Format::Trec);
        let mut s = String::new();
        input.reader.read_to_string(&mut s).unwrap();
        assert_eq!(s, "q 0 a 1\nq 0 b 0\nr 0 c 2\n");
        let empty = Chunked {
            text: b"\n \n".to_vec(),
            at: 0,
            sizes: vec![1],
            turn: 0,
            reused: 0,
        };
        let e = from_chunks(Path::new("blank"), Box::new(empty))
            .err()
            .unwrap();
        assert_eq!(e.kind, ErrorKind::Empty);
    }

    /// Text that starts with a UTF-8 byte order mark is refused, named at line 1, however it is
    /// read (mapped, streamed, from a pipe, gzipped); the same bytes further on are a name's.
    #[test]
    fn a_byte_order_mark_at_the_start_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let bom = b"\xEF\xBB\xBFg1 Q0 a 1 0.9 t\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bom).unwrap();
        let jsonl = b"\xEF\xBB\xBF{\"goal_id\": \"g1\", \"retrieved_premises\": [\"a\"]}\n";
        for (name, bytes) in [
            ("t.txt", bom.to_vec()),
            ("t.gz", gz.finish().unwrap()),
            ("t.jsonl", jsonl.to_vec()),
        ] {
            let p = dir.path().join(name);
            std::fs::write(&p, &bytes).unwrap();
            for mmap in [true, false] {
                let e = open_with(&p, mmap).err().unwrap();
                assert_eq!(
                    (e.kind, e.line),
                    (ErrorKind::Syntax, Some(1)),
                    "{name}: {e}"
                );
                assert!(e.to_string().contains("byte order mark"), "{e}");
            }
            let e = from_reader(&p, Box::new(std::io::Cursor::new(bytes)))
                .err()
                .unwrap();
            assert!(e.to_string().contains("byte order mark"), "{e}");
        }
        // From a pipe that hands over one byte a read: the magic number and the mark are found.
        struct Trickle(Vec<u8>, usize);
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let Some(&b) = self.0.get(self.1) else {
                    return Ok(0);
                };
                buf[0] = b;
                self.1 += 1;
                Ok(1)
            }
        }
        let trickle = |b: &[u8]| Box::new(Trickle(b.to_vec(), 0));
        let e = from_reader(Path::new("p"), trickle(bom)).err().unwrap();
        assert!(e.to_string().contains("byte order mark"), "{e}");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"g1 Q0 a 1 0.9 t\n").unwrap();
        let mut input = from_reader(Path::new("p"), trickle(&gz.finish().unwrap())).unwrap();
        assert_eq!(input.compression, Compression::Gzip);
        let mut s = String::new();
        input.reader.read_to_string(&mut s).unwrap();
        assert_eq!(s, "g1 Q0 a 1 0.9 t\n");
        let later = dir.path().join("later.txt");
        std::fs::write(&later, b"g0 Q0 a 1 0.9 t\n\xEF\xBB\xBFg1 Q0 a 1 0.9 t\n").unwrap();
        assert_eq!(open_with(&later, true).unwrap().format, Format::Trec);
    }

    proptest::proptest! {
        /// The galloping search equals the walk on contiguous goals of any length (blank and
        /// comment lines anywhere); on goals that come back it still cuts where the goal changes.
        #[test]
        fn goal_boundaries_by_galloping_equal_the_walk(
            goals in proptest::collection::vec((0u8..4, 1usize..400, 0u8..30), 1..6),
            junk in proptest::collection::vec(0usize..5000, 0..6),
            contiguous: bool,
        ) {
            let mut text = String::new();
            for (k, &(g, n, pad)) in goals.iter().enumerate() {
                let g = if contiguous { k as u8 } else { g };
                for l in 0..n {
                    text += &format!("g{g} Q0 l{l}{} {l} 1 r\n", "x".repeat(pad as usize));
                }
            }
            for &at in &junk {
                // A blank or comment line at a line start.
                let at = at.min(text.len());
                let at = text[..at].rfind('\n').map_or(0, |p| p + 1);
                text.insert_str(at, if at % 2 == 0 { "# c\n" } else { "\n" });
            }
            let buf = text.as_bytes();
            let last_nl = memchr::memrchr(b'\n', buf).unwrap();
            let got = last_goal_boundary(buf, last_nl);
            if contiguous {
                proptest::prop_assert_eq!(got, boundary_by_walking(buf, last_nl));
            } else if let Some(cut) = got {
                // The real lines on either side of the cut name different goals.
                let before = real_line_before(buf, cut - 1).unwrap().2;
                let after = first_real_line(buf, cut, buf.len()).unwrap().2;
                proptest::prop_assert_ne!(before, after);
            }
        }
    }

    #[test]
    fn positional_batches_equal_streamed_ones() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run");
        for text in shaped_texts() {
            std::fs::write(&p, &text).unwrap();
            for target in [1, 7, 50, 333, 1000, 1 << 20] {
                for probe in [1, 5, 64, 64 << 10] {
                    let input = open(&p).unwrap();
                    assert!(input.file.is_some(), "a plain file is read positionally");
                    let mut r = BatchReader::new(input, GoalKey::FirstField, target);
                    r.probe_first = probe;
                    assert!(r.file.is_some(), "the reader reads positionally");
                    let mut got = Vec::new();
                    let mut first_byte = 0;
                    while let Some(claim) = r.claim().unwrap() {
                        assert_eq!(claim.index, got.len() as u64);
                        let b = claim.read(Vec::new()).unwrap();
                        assert_eq!(b.first_byte, first_byte);
                        first_byte += b.data.len() as u64;
                        got.push(String::from_utf8(b.data.to_vec()).unwrap());
                    }
                    let mut s =
                        BatchReader::new(input_of(text.as_bytes()), GoalKey::FirstField, target);
                    let mut want = Vec::new();
                    while let Some(b) = s.next_batch(Vec::new()).unwrap() {
                        want.push(String::from_utf8(b.data.to_vec()).unwrap());
                    }
                    assert_eq!(got, want, "target {target}, probe {probe}: {text:?}");
                    assert_eq!(r.bytes_read(), text.len() as u64);
                }
            }
        }
    }

    #[test]
    fn a_file_that_grows_while_read_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run");
        std::fs::write(&p, "a Q0 x 1 1 t\nb Q0 x 1 0.").unwrap();
        let mut r = BatchReader::new(open(&p).unwrap(), GoalKey::FirstField, 1 << 20);
        let b = r.claim().unwrap().unwrap().read(Vec::new()).unwrap();
        assert_eq!(&b.data[..], b"a Q0 x 1 1 t\nb Q0 x 1 0.\n");
        // The writer finishes the line: the score read was cut short.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"5 t\n")
            .unwrap();
        let e = r.claim().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Io);
        assert!(e.to_string().contains("changed while it was read"), "{e}");
    }

    #[test]
    fn a_file_that_shrinks_under_a_claim_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run");
        std::fs::write(&p, "a Q0 x 1 1 t\nb Q0 x 1 1 t\n").unwrap();
        let mut r = BatchReader::new(open(&p).unwrap(), GoalKey::FirstField, 1 << 20);
        let claim = r.claim().unwrap().unwrap();
        std::fs::write(&p, "a Q0").unwrap();
        let e = claim.read(Vec::new()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Io);
        assert!(
            e.to_string()
                .contains("changed while it was read (from 26 to 4 bytes)"),
            "{e}"
        );
        // And the end of the claims says so too.
        assert!(r.claim().is_err());
    }

    /// A line longer than the limit stops every way of reading, naming the line's first byte,
    /// whether the file ends inside it or continues; a goal of many short lines of the same total
    /// size is read whole; a long line within the limit is read.
    #[test]
    fn a_line_longer_than_the_limit_is_an_error_on_every_path() {
        let dir = tempfile::tempdir().unwrap();
        let head = "a Q0 x 1 1 t\n";
        let long = format!("b Q0 {} 1 1 t", "y".repeat(5000));
        let texts = [
            (format!("{head}{long}"), true),
            (format!("{head}{long}\nc Q0 x 1 1 t\n"), true),
            (format!("{head}{}", "b Q0 z 1 1 t\n".repeat(2000)), false),
            (format!("{head}{}\n", &long[..3000]), false),
        ];
        for (i, (text, refused)) in texts.iter().enumerate() {
            let p = dir.path().join(format!("f{i}"));
            std::fs::write(&p, text).unwrap();
            let chunked = || {
                let src = Chunked {
                    text: text.as_bytes().to_vec(),
                    at: 0,
                    sizes: vec![700, 1300],
                    turn: 0,
                    reused: 0,
                };
                from_chunks(&p, Box::new(src)).unwrap()
            };
            let inputs = [
                ("streamed", input_of(text.as_bytes())),
                ("positional", open_with(&p, false).unwrap()),
                ("mapped", open_with(&p, true).unwrap()),
                ("chunked", chunked()),
            ];
            for (how, input) in inputs {
                let mut r = BatchReader::new(input, GoalKey::FirstField, 512);
                r.set_max_line(4000);
                let mut got = String::new();
                let res = loop {
                    match r.next_batch(Vec::new()) {
                        Ok(Some(b)) => got += std::str::from_utf8(&b.data).unwrap(),
                        Ok(None) => break Ok(()),
                        Err(e) => break Err(e),
                    }
                };
                if *refused {
                    let e = res.expect_err(how);
                    assert_eq!((e.kind, e.byte), (ErrorKind::Syntax, Some(13)), "{how} {i}");
                    assert!(
                        e.to_string().contains(
                            "a line longer than 4000 bytes (no newline within 4000 bytes"
                        ),
                        "{how}: {e}"
                    );
                } else {
                    res.unwrap_or_else(|e| panic!("{how} {i}: {e}"));
                    let want = if text.ends_with('\n') {
                        text.clone()
                    } else {
                        format!("{text}\n")
                    };
                    assert_eq!(got, want, "{how} {i}");
                }
            }
        }
    }

    #[test]
    fn sniffs_compression_and_format() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("p.trec");
        std::fs::write(&plain, "\n\nq Q0 a 1 1 t\n").unwrap();
        let i = open(&plain).unwrap();
        assert_eq!((i.compression, i.format), (Compression::None, Format::Trec));
        let gz = dir.path().join("p.gz");
        let mut e =
            flate2::write::GzEncoder::new(File::create(&gz).unwrap(), flate2::Compression::fast());
        e.write_all(b"{\"goal_id\": \"g\"}\n").unwrap();
        e.finish().unwrap();
        let mut i = open(&gz).unwrap();
        assert_eq!(
            (i.compression, i.format),
            (Compression::Gzip, Format::Jsonl)
        );
        let mut s = String::new();
        i.reader.read_to_string(&mut s).unwrap();
        assert_eq!(s, "{\"goal_id\": \"g\"}\n");
        let zst = dir.path().join("p.zst");
        std::fs::write(&zst, zstd::encode_all(&b"q 0 a 1\n"[..], 1).unwrap()).unwrap();
        let i = open(&zst).unwrap();
        assert_eq!((i.compression, i.format), (Compression::Zstd, Format::Trec));
        let empty = dir.path().join("e");
        std::fs::write(&empty, "\n  \n").unwrap();
        assert_eq!(open(&empty).err().unwrap().kind, ErrorKind::Empty);
        assert_eq!(
            open(&dir.path().join("missing")).err().unwrap().kind,
            ErrorKind::Io
        );
    }

    /// The text an input decompresses to, or its error, read from a file and from a reader.
    fn decompressed(dir: &Path, bytes: &[u8]) -> Result<(Compression, String), String> {
        let p = dir.join("c");
        std::fs::write(&p, bytes).unwrap();
        let from_file = open(&p).map_err(|e| e.to_string()).and_then(|mut i| {
            let mut s = String::new();
            let r = i.reader.read_to_string(&mut s).map_err(|e| e.to_string());
            r.map(|_| (i.compression, s))
        });
        let from_pipe = from_reader(&p, Box::new(std::io::Cursor::new(bytes.to_vec())))
            .map_err(|e| e.to_string())
            .and_then(|mut i| {
                let mut s = String::new();
                let r = i.reader.read_to_string(&mut s).map_err(|e| e.to_string());
                r.map(|_| (i.compression, s))
            });
        assert_eq!(from_file, from_pipe);
        from_file
    }

    #[test]
    fn zstd_skippable_frames_and_gzip_padding_are_read_as_their_tools_read_them() {
        let dir = tempfile::tempdir().unwrap();
        let text = "q Q0 a 1 0.5 t\nq Q0 b 2 0.4 t\n";
        let zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
        // pzstd's output: a skippable frame (magic 0x184D2A5X, length, that many bytes) before
        // each frame; any of the 16 magics, and skippable frames between frames too.
        for magic in [0x184d_2a50u32, 0x184d_2a5f] {
            let mut b = Vec::new();
            for part in [
                &zst,
                &zstd::encode_all(&b"q Q0 c 3 0.3 t\n"[..], 1).unwrap(),
            ] {
                b.extend_from_slice(&magic.to_le_bytes());
                b.extend_from_slice(&4u32.to_le_bytes());
                b.extend_from_slice(&[9, 9, 9, 9]);
                b.extend_from_slice(part);
            }
            let want = format!("{text}q Q0 c 3 0.3 t\n");
            assert_eq!(decompressed(dir.path(), &b), Ok((Compression::Zstd, want)));
        }
        // gzip: members, then zero bytes to the end (ignored, as gzip -d ignores them).
        let gz = |t: &str| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(t.as_bytes()).unwrap();
            e.finish().unwrap()
        };
        for zeros in [1, 7, 512, 70_000] {
            let mut b = gz(text);
            b.extend(gz("q Q0 c 3 0.3 t\n"));
            b.extend(std::iter::repeat_n(0u8, zeros));
            let want = format!("{text}q Q0 c 3 0.3 t\n");
            assert_eq!(
                decompressed(dir.path(), &b),
                Ok((Compression::Gzip, want)),
                "{zeros}"
            );
        }
        // Anything else after a member, or after padding, is an error saying what it found.
        for (tail, what) in [
            (&b"x"[..], "after a gzip member, byte 0x78: expected another member (1f 8b) or zero bytes to the end"),
            (&b"\0\0\x01"[..], "after zero bytes of padding, byte 0x01: expected zero bytes to the end"),
        ] {
            let mut b = gz(text);
            b.extend_from_slice(tail);
            let e = decompressed(dir.path(), &b).unwrap_err();
            assert!(e.contains(what), "{e}");
        }
    }
}
