//! A library of premises as LeanDojo describes it (`corpus.jsonl`): one line per source file,
//! `{"path": ..., "imports": [paths], "premises": [{"full_name", "code", "start": [line, col],
//! "end": [line, col], ...}]}`, and which premises a goal may use.
//!
//! A premise is *accessible* at a place in a file (a theorem's position) when it comes from a file
//! the theorem's file imports, directly or transitively, or from the same file and ends at or
//! before that place (`end <= pos`, positions compared as `(line, column)`). Premises are read as
//! ReProver reads them: one whose `full_name` is null or contains `user__.n`, whose `code` is
//! empty, or whose name is a bracketed list of mutual definitions (`[a, b]`) is skipped (and
//! counted).
//!
//! Held: each file's path and premise range, its imports, and its transitive imports as a bitset
//! over the files (`files / 8` bytes a file: 3.1 MB for 5,000 files); each premise's name (in an
//! [`Interner`]), file and end position (12 bytes). Premise ids follow the corpus: a file's
//! premises are consecutive. Asking whether premise `p` is accessible at a place costs one load
//! of `p`'s file and one bit test (or one position compare in the same file), no table per goal.
//! A cycle among the imports, an import of a file the corpus does not list, a path listed twice
//! and a premise name defined twice are errors that name the files (and lines).

use crate::error::{ErrorKind, InputError};
use crate::truth::Interner;
use serde::Deserialize;
use std::borrow::Cow;
use std::io::BufRead;
use std::ops::Range;
use std::path::{Path, PathBuf};

mod binary;
mod index;
mod scan;

pub use index::{Found, PremiseIndex};

/// A place in a source file: `(line, column)`, compared in that order (LeanDojo's `Pos`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
pub struct Pos {
    /// The line (1-based in LeanDojo's data).
    pub line: u32,
    /// The column.
    pub col: u32,
}

impl Pos {
    /// `(line, col)`.
    pub fn new(line: u32, col: u32) -> Pos {
        Pos { line, col }
    }
}

/// Where a goal stands: a file of the corpus and a place in it (its theorem's position).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The file's id ([`Corpus::file_id`]).
    pub file: u32,
    /// The theorem's position.
    pub pos: Pos,
}

/// Where a premise comes from, as seen from a place.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Defined earlier in the same file (accessible).
    InFile,
    /// Defined in a file imported directly or transitively (accessible).
    Imported,
    /// Neither: later in the same file, or in a file not imported.
    Inaccessible,
}

/// Premises of the corpus that the loader skips, by ReProver's rules.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// `full_name` null.
    pub no_name: u64,
    /// `full_name` containing `user__.n`.
    pub user_n: u64,
    /// `code` empty.
    pub empty_code: u64,
    /// `full_name` a bracketed list of mutual definitions.
    pub mutual: u64,
}

impl Skipped {
    fn add(&mut self, o: &Skipped) {
        self.no_name += o.no_name;
        self.user_n += o.user_n;
        self.empty_code += o.empty_code;
        self.mutual += o.mutual;
    }

    /// All of them.
    pub fn total(&self) -> u64 {
        self.no_name + self.user_n + self.empty_code + self.mutual
    }
}

/// A corpus read (LeanDojo's `corpus.jsonl`): its files, their imports and their premises, and
/// which premises are accessible at a place ([`Corpus::origin`]). Premise ids follow the corpus (a
/// file's premises are consecutive); each file's transitive imports are a bitset over the files.
#[derive(Debug)]
pub struct Corpus {
    path: PathBuf,
    files: Interner,
    /// Per file: its premises' ids.
    file_premises: Vec<Range<u32>>,
    /// Per file: the line of the corpus it was read from.
    file_line: Vec<u64>,
    premises: Interner,
    premise_file: Vec<u32>,
    premise_end: Vec<Pos>,
    /// Per file: a bitset (`words` words) of the files it imports, directly or transitively.
    closure: Vec<u64>,
    words: usize,
    skipped: Skipped,
}

/// One line of `corpus.jsonl`; other keys (`kind`, a premise's `start`) are not read.
#[derive(Deserialize)]
struct FileLine<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
    #[serde(default, borrow)]
    imports: Vec<Cow<'a, str>>,
    #[serde(default, borrow)]
    premises: Vec<PremiseLine<'a>>,
}

#[derive(Deserialize)]
struct PremiseLine<'a> {
    #[serde(borrow)]
    full_name: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "code_is_empty")]
    code: EmptyCode,
    end: (u32, u32),
}

/// Whether a premise's `code` is the empty string (read without keeping the code).
#[derive(Default)]
struct EmptyCode(bool);

fn code_is_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<EmptyCode, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = EmptyCode;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("the premise's code, a string")
        }
        fn visit_str<E>(self, s: &str) -> Result<EmptyCode, E> {
            Ok(EmptyCode(s.is_empty()))
        }
        fn visit_unit<E>(self) -> Result<EmptyCode, E> {
            Ok(EmptyCode(true))
        }
    }
    d.deserialize_any(V)
}

/// Threads parsing corpus lines ([`Corpus::from_reader`]).
const PARSERS: usize = 2;
/// Bytes of lines a parsing thread takes at a time.
const BATCH_BYTES: usize = 1 << 20;

/// Whole lines of the corpus to parse, as read (line endings included; the last line of the
/// input may lack one): the first `len` bytes of `text` (the rest, a recycled buffer's bytes, is
/// never read), and where they start: the first one's line number and byte.
struct Batch {
    seq: u64,
    text: Vec<u8>,
    len: usize,
    line: u64,
    byte: u64,
}

impl Batch {
    /// Each line parsed, the premises ReProver's rules skip left out and counted, or the message
    /// of its syntax error (the lines after it are not parsed: they are never added).
    /// Lines are cut here, on the parsing threads (the reading thread finds the batch's last
    /// line ending and counts its lines, one vectorised pass, for the next batch's first line
    /// number): a line's ending is left out, a blank line dropped. Gives the batch's
    /// buffer back, to be filled again.
    fn parse(self) -> (ParsedBatch, Vec<u8>) {
        let mut out = ParsedBatch {
            bytes: self.len as u64,
            ..ParsedBatch::default()
        };
        let mut start = 0;
        let mut line = self.line;
        let lines = &self.text[..self.len];
        while start < lines.len() {
            let rest = &lines[start..];
            let len = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            let (at, byte) = (line, self.byte + start as u64);
            let text = &rest[..len];
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            start += len + 1;
            line += 1;
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let line = at;
            // The common shape without serde; serde for the rest (and every error's words).
            if let Some(f) = std::str::from_utf8(text).ok().and_then(scan::file_line) {
                let file = Ok(out.add(&f));
                out.lines.push(ParsedLine { line, byte, file });
                continue;
            }
            let file = match serde_json::from_slice::<FileLine<'_>>(text) {
                Ok(f) => Ok(out.add(&f)),
                Err(e) => Err(format!(
                    "expected a corpus line {{\"path\": ..., \"imports\": [...], \"premises\": \
                     [{{\"full_name\", \"code\", \"end\": [line, col]}}, ...]}}: {e}"
                )),
            };
            let failed = file.is_err();
            out.lines.push(ParsedLine { line, byte, file });
            if failed {
                break;
            }
        }
        (out, self.text)
    }
}

/// A batch of lines parsed: their strings in one buffer.
#[derive(Default)]
struct ParsedBatch {
    arena: String,
    /// Import names (`ParsedFile::imports` ranges over them): where they are in `arena`.
    spans: Vec<(u32, u32)>,
    /// Premises kept (`ParsedFile::premises`): the name in `arena`, where it ends.
    premises: Vec<((u32, u32), Pos)>,
    lines: Vec<ParsedLine>,
    /// Bytes of the lines parsed.
    bytes: u64,
}

impl ParsedBatch {
    /// The text of `span`.
    fn text(&self, (a, z): (u32, u32)) -> &str {
        &self.arena[a as usize..z as usize]
    }

    fn keep(&mut self, s: &str) -> (u32, u32) {
        let a = self.arena.len() as u32;
        self.arena.push_str(s);
        (a, self.arena.len() as u32)
    }

    /// `f`'s path, imports and the premises ReProver's rules keep, held here.
    fn add(&mut self, f: &FileLine<'_>) -> ParsedFile {
        let path = self.keep(&f.path);
        let first = self.spans.len();
        for i in &f.imports {
            let s = self.keep(i);
            self.spans.push(s);
        }
        let imports = first..self.spans.len();
        let first = self.premises.len();
        let mut skipped = Skipped::default();
        for p in &f.premises {
            let Some(name) = &p.full_name else {
                skipped.no_name += 1;
                continue;
            };
            if name.contains("user__.n") {
                skipped.user_n += 1;
            } else if p.code.0 {
                skipped.empty_code += 1;
            } else if name.starts_with('[') && name.ends_with(']') {
                skipped.mutual += 1;
            } else {
                let s = self.keep(name);
                self.premises.push((s, Pos::new(p.end.0, p.end.1)));
            }
        }
        ParsedFile {
            path,
            imports,
            premises: first..self.premises.len(),
            skipped,
        }
    }
}

/// One parsed line of the corpus.
struct ParsedLine {
    line: u64,
    byte: u64,
    file: Result<ParsedFile, String>,
}

/// One file of a [`ParsedBatch`].
struct ParsedFile {
    path: (u32, u32),
    imports: Range<usize>,
    premises: Range<usize>,
    skipped: Skipped,
}

/// Parsed batches put back in order.
#[derive(Default)]
struct InOrder {
    /// The sequence number of the next batch to add.
    next: u64,
    waiting: std::collections::BTreeMap<u64, ParsedBatch>,
}

impl InOrder {
    /// Takes batch `seq`; returns the batches now next in order.
    fn put(&mut self, seq: u64, parsed: ParsedBatch) -> Vec<ParsedBatch> {
        self.waiting.insert(seq, parsed);
        let mut ready = Vec::new();
        while let Some(b) = self.waiting.remove(&self.next) {
            ready.push(b);
            self.next += 1;
        }
        ready
    }
}

/// The longest line read (a file's premises with their code): past it, an error.
pub const MAX_CORPUS_LINE: usize = 1 << 30;

/// The most files a corpus may list: each file's transitive imports are a bitset over the files,
/// `F² / 8` bytes in all (512 MiB at this bound; Mathlib has about 6,000 files, 4.5 MB), and
/// computing them takes time of the same order. A file past it is an error naming its line.
pub const MAX_CORPUS_FILES: usize = 1 << 16;

impl Corpus {
    /// Reads `path`: a `corpus.jsonl` (plain, gzip or zstd, or `-` for stdin), or a corpus in
    /// binary form ([`Corpus::write_binary`]), known by its first bytes.
    pub fn read(path: &Path) -> Result<Corpus, InputError> {
        if path != Path::new("-") {
            if let Some(c) = Corpus::read_if_binary(path)? {
                return Ok(c);
            }
        }
        let input = crate::input::open_with(path, false)?;
        // The bytes on disk: a compressed file's, fewer than its lines', only make the first
        // guess of the premises' table small.
        Corpus::from_reader_sized(path, input.reader, input.size_on_disk)
    }

    /// The corpus at `path` if it is in binary form.
    fn read_if_binary(path: &Path) -> Result<Option<Corpus>, InputError> {
        use std::io::Read;
        let read = |e| InputError::read(path, e);
        let mut file = std::fs::File::open(path).map_err(read)?;
        let mut magic = [0u8; 8];
        let mut got = 0;
        while got < magic.len() {
            match file.read(&mut magic[got..]) {
                Ok(0) => return Ok(None),
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(read(e)),
            }
        }
        if &magic != binary::MAGIC {
            return Ok(None);
        }
        let mut bytes = magic.to_vec();
        if let Ok(m) = file.metadata() {
            bytes.reserve_exact(m.len() as usize);
        }
        file.read_to_end(&mut bytes).map_err(read)?;
        Corpus::from_binary(path, &bytes).map(Some)
    }

    /// Reads a corpus from `reader`, named `path` in errors. The lines are parsed on
    /// two threads, a batch of lines at a time, and added in file order (ids, the first
    /// error and the files a repeated name names are those of reading the lines one by one);
    /// at most four batches of 1 MiB wait to be parsed.
    pub fn from_reader(path: &Path, reader: impl BufRead) -> Result<Corpus, InputError> {
        Corpus::from_reader_sized(path, reader, None)
    }

    /// [`Corpus::from_reader`], told the input's size in bytes when it is known.
    fn from_reader_sized(
        path: &Path,
        mut reader: impl BufRead,
        size_hint: Option<u64>,
    ) -> Result<Corpus, InputError> {
        let mut c = Corpus {
            path: path.to_path_buf(),
            files: Interner::new(),
            file_premises: Vec::new(),
            file_line: Vec::new(),
            premises: Interner::new(),
            premise_file: Vec::new(),
            premise_end: Vec::new(),
            closure: Vec::new(),
            words: 0,
            skipped: Skipped::default(),
        };
        // Imports by name until every file is known: (file, line, byte, names).
        let mut imports: Vec<(u32, u64, u64, Vec<String>)> = Vec::new();
        let (to_parse, batches) = std::sync::mpsc::sync_channel::<Batch>(2 * PARSERS);
        let batches = std::sync::Mutex::new(batches);
        // Batch buffers parsed, to be filled again (no fresh pages for every batch).
        let (recycle_tx, recycle) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::scope(|s| -> Result<(), InputError> {
            let (parsed_tx, parsed) = std::sync::mpsc::channel::<(u64, ParsedBatch)>();
            for _ in 0..PARSERS {
                let (batches, parsed_tx) = (&batches, parsed_tx.clone());
                let recycle_tx = recycle_tx.clone();
                s.spawn(move || loop {
                    let next = batches.lock().map(|b| b.recv());
                    let Ok(Ok(batch)) = next else { break };
                    let seq = batch.seq;
                    let (done, text) = batch.parse();
                    let _ = recycle_tx.send(text);
                    if parsed_tx.send((seq, done)).is_err() {
                        break;
                    }
                });
            }
            drop(parsed_tx);
            let mut order = InOrder::default();
            let mut ids = Vec::new();
            let mut sized = false;
            let mut add = |c: &mut Corpus, b: ParsedBatch| -> Result<(), InputError> {
                // The batch's premise names interned at once (their table's cache misses
                // overlap); a name met before keeps its id, which `add_file` finds out of turn.
                let names: Vec<&[u8]> = (b.premises.iter())
                    .map(|&(n, _)| b.text(n).as_bytes())
                    .collect();
                if !sized {
                    // The first batch tells how many premises the input's bytes hold: the
                    // table is made that large once rather than grown by doubling.
                    sized = true;
                    if let Some(total) = size_hint.filter(|_| b.bytes > 0) {
                        let expect = (names.len() as u64).saturating_mul(total) / b.bytes;
                        c.premises.reserve(expect.min(1 << 26) as usize);
                    }
                }
                ids.clear();
                c.premises.intern_many(&names, &mut ids);
                let mut next = 0;
                for l in &b.lines {
                    let f = l.file.as_ref().map_err(|m| {
                        InputError::at(ErrorKind::Syntax, &c.path, l.line, l.byte, m.clone())
                    })?;
                    let n = f.premises.len();
                    let names = c.add_file(&b, f, &ids[next..next + n], l.line, l.byte)?;
                    next += n;
                    imports.push((c.files.len() as u32 - 1, l.line, l.byte, names));
                }
                Ok(())
            };
            // Whole lines are read into a batch of about BATCH_BYTES; a line cut at its end
            // goes on to the next batch.
            let (mut line, mut byte, mut sent) = (1u64, 0u64, 0u64);
            let mut carry: Vec<u8> = Vec::new();
            let read = loop {
                // A recycled buffer keeps its length (no bytes zeroed again); `len` of them are
                // this batch's, first the line the last batch cut (it holds no line ending).
                let mut text = recycle.try_recv().unwrap_or_default();
                let mut len = carry.len();
                let (mut want, mut searched) = (BATCH_BYTES.max(2 * len), len);
                if text.len() < want {
                    text.resize(want, 0);
                }
                text[..len].copy_from_slice(&carry);
                carry.clear();
                let mut failed = None;
                let cut = loop {
                    // Read straight into the batch (a buffered reader whose buffer is empty
                    // passes a large read through): the bytes are copied once, by the kernel.
                    while len < want {
                        match reader.read(&mut text[len..want]) {
                            Ok(0) => break,
                            Ok(n) => len += n,
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                            Err(e) => {
                                failed = Some(InputError::read(path, e));
                                break;
                            }
                        }
                    }
                    let last =
                        memchr::memrchr(b'\n', &text[searched..len]).map(|i| searched + i + 1);
                    if len < want {
                        // The input's end (every line goes), or a read error (the lines
                        // before it go, their errors first).
                        break if failed.is_some() {
                            last.unwrap_or(0)
                        } else {
                            len
                        };
                    }
                    if let Some(cut) = last {
                        break cut;
                    }
                    // One line longer than the batch: read on, up to the longest line.
                    if len > MAX_CORPUS_LINE {
                        failed = Some(InputError::at(
                            ErrorKind::Syntax,
                            path,
                            line,
                            byte,
                            format!("a line longer than {} MiB", MAX_CORPUS_LINE >> 20),
                        ));
                        break 0;
                    }
                    searched = len;
                    want = len * 2;
                    text.resize(want, 0);
                };
                let end = failed.is_some() || cut == len && len < want;
                carry.extend_from_slice(&text[cut..len]);
                if cut > 0 {
                    let lines = memchr::memchr_iter(b'\n', &text[..cut]).count() as u64
                        + u64::from(text[cut - 1] != b'\n');
                    let batch = Batch {
                        seq: sent,
                        line,
                        byte,
                        text,
                        len: cut,
                    };
                    (line, byte) = (line + lines, byte + cut as u64);
                    sent += 1;
                    if to_parse.send(batch).is_err() {
                        break Ok(()); // a parser stopped: only by a panic, re-raised below
                    }
                }
                if end {
                    break failed.map_or(Ok(()), Err);
                }
                // What is parsed already, added while the next lines are read.
                while let Ok((seq, parsed)) = parsed.try_recv() {
                    for b in order.put(seq, parsed) {
                        add(&mut c, b)?;
                    }
                }
            };
            drop(to_parse);
            // Every line before a read error is added first: its error comes first.
            while order.next < sent {
                let Ok((seq, parsed)) = parsed.recv() else {
                    break; // a parser panicked: the scope re-raises it
                };
                for b in order.put(seq, parsed) {
                    add(&mut c, b)?;
                }
            }
            read
        })?;
        c.resolve(imports)?;
        Ok(c)
    }

    /// Adds a parsed line's file (`f`, of batch `b`), whose premises were interned as `ids` (an
    /// id other than the next one: a name defined before); its imports' names come back to be
    /// resolved at the end.
    fn add_file(
        &mut self,
        b: &ParsedBatch,
        f: &ParsedFile,
        ids: &[u32],
        line: u64,
        byte: u64,
    ) -> Result<Vec<String>, InputError> {
        let bad = |m: String| InputError::at(ErrorKind::Syntax, &self.path, line, byte, m);
        let path = b.text(f.path);
        let id = self.files.len() as u32;
        if id as usize == MAX_CORPUS_FILES {
            return Err(bad(format!(
                "file `{path}` is one more than a corpus may list ({MAX_CORPUS_FILES} files: each \
                 file's transitive imports are held as a bit per file, {} MiB for that many)",
                (MAX_CORPUS_FILES * MAX_CORPUS_FILES / 8) >> 20
            )));
        }
        if let Some(first) = self.files.get(path.as_bytes()) {
            return Err(bad(format!(
                "file `{path}` is listed twice (first at line {})",
                self.file_line[first as usize]
            )));
        }
        self.files.intern(path.as_bytes());
        self.file_line.push(line);
        let start = self.premise_file.len() as u32;
        for (&(name, end), &pid) in b.premises[f.premises.clone()].iter().zip(ids) {
            let name = b.text(name);
            if pid as usize != self.premise_file.len() {
                let other = self.premise_file[pid as usize];
                let other_line = self.file_line[other as usize];
                let other = String::from_utf8_lossy(self.files.name(other)).into_owned();
                return Err(bad(format!(
                    "premise `{name}` is defined again in `{path}`, first in `{other}` (line \
                     {other_line}): a premise name must name one premise"
                )));
            }
            self.premise_file.push(id);
            self.premise_end.push(end);
        }
        self.skipped.add(&f.skipped);
        self.file_premises
            .push(start..self.premise_file.len() as u32);
        Ok(b.spans[f.imports.clone()]
            .iter()
            .map(|&s| b.text(s).to_string())
            .collect())
    }

    /// Resolves the imports and computes every file's transitive imports; a cycle or an unknown
    /// import is an error.
    fn resolve(&mut self, named: Vec<(u32, u64, u64, Vec<String>)>) -> Result<(), InputError> {
        let n = self.files.len();
        let mut direct: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (file, line, byte, names) in named {
            for name in names {
                let Some(to) = self.files.get(name.as_bytes()) else {
                    return Err(InputError::at(
                        ErrorKind::Syntax,
                        &self.path,
                        line,
                        byte,
                        format!(
                            "`{}` imports `{name}`, which the corpus does not list",
                            self.show_file(file)
                        ),
                    ));
                };
                direct[file as usize].push(to);
            }
        }
        // Depth-first, a file after every file it imports (an explicit stack: import chains can
        // be thousands of files deep); a file met again while still open closes a cycle.
        self.words = n.div_ceil(64).max(1);
        self.closure = vec![0; n * self.words];
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![NEW; n];
        for root in 0..n {
            if state[root] != NEW {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            state[root] = OPEN;
            while let Some(&mut (f, ref mut next)) = stack.last_mut() {
                if let Some(&to) = direct[f].get(*next) {
                    *next += 1;
                    let to = to as usize;
                    match state[to] {
                        NEW => {
                            state[to] = OPEN;
                            stack.push((to, 0));
                        }
                        OPEN => {
                            let at = stack.iter().position(|&(g, _)| g == to).unwrap_or(0);
                            let mut cycle: Vec<String> = stack[at..]
                                .iter()
                                .map(|&(g, _)| format!("`{}`", self.show_file(g as u32)))
                                .collect();
                            cycle.push(format!("`{}`", self.show_file(to as u32)));
                            return Err(InputError::at(
                                ErrorKind::Syntax,
                                &self.path,
                                self.file_line[f],
                                0,
                                format!(
                                    "the imports form a cycle: {} (a file cannot import itself, \
                                     directly or transitively)",
                                    cycle.join(" imports ")
                                ),
                            )
                            .without_byte());
                        }
                        _ => {}
                    }
                    continue;
                }
                // Every import of `f` is done: its closure is theirs and them.
                let w = self.words;
                let mut row = vec![0u64; w];
                for &to in &direct[f] {
                    let to = to as usize;
                    row[to / 64] |= 1 << (to % 64);
                    for (r, x) in row.iter_mut().zip(&self.closure[to * w..(to + 1) * w]) {
                        *r |= x;
                    }
                }
                self.closure[f * w..(f + 1) * w].copy_from_slice(&row);
                state[f] = DONE;
                stack.pop();
            }
        }
        Ok(())
    }

    fn show_file(&self, f: u32) -> String {
        String::from_utf8_lossy(self.files.name(f)).into_owned()
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A fingerprint of what the corpus says of accessibility and origin (docs/FORMAT.md,
    /// "Summary files"): each file's path, premise range and files imported (transitively),
    /// each premise's name, file and end, in the corpus's order. The same corpus gives the same
    /// on any machine, as text, compressed or in binary form; another (or the same lines in
    /// another order) gives another, but for a 2^-64 chance.
    pub fn fingerprint(&self) -> u64 {
        use crate::fingerprint::{fmix, mix};
        let mut h = mix(0x636f_7270_7573_0001, self.files.len() as u64);
        for f in 0..self.files.len() {
            let r = &self.file_premises[f];
            h = mix(h, self.file_hash(f as u32));
            h = mix(h, (r.start as u64) << 32 | r.end as u64);
            for &w in &self.closure[f * self.words..(f + 1) * self.words] {
                h = mix(h, w);
            }
        }
        h = mix(h, self.premises.len() as u64);
        for p in 0..self.premises.len() {
            let end = self.premise_end[p];
            h = mix(h, self.premises.hash_of(p as u32));
            h = mix(h, (self.premise_file[p] as u64) << 32 | end.line as u64);
            h = mix(h, end.col as u64);
        }
        fmix(h)
    }

    /// Files.
    pub fn files(&self) -> usize {
        self.files.len()
    }

    /// Premises (those skipped not counted).
    pub fn premises(&self) -> usize {
        self.premises.len()
    }

    /// Premises skipped, by reason.
    pub fn skipped(&self) -> Skipped {
        self.skipped
    }

    /// The id of the file at `path`.
    pub fn file_id(&self, path: &[u8]) -> Option<u32> {
        self.files.get(path)
    }

    /// The path of file `id`.
    pub fn file_path(&self, id: u32) -> &[u8] {
        self.files.name(id)
    }

    /// The name hash of file `id`'s path (`bytes::name_hash` of [`Corpus::file_path`], kept).
    pub(crate) fn file_hash(&self, id: u32) -> u64 {
        self.files.hash_of(id)
    }

    /// File `id`'s premises' ids.
    pub fn file_premises(&self, id: u32) -> Range<u32> {
        self.file_premises[id as usize].clone()
    }

    /// The id of the premise named `name`.
    pub fn premise_id(&self, name: &[u8]) -> Option<u32> {
        self.premises.get(name)
    }

    /// [`Corpus::premise_id`] of each of `names`, in order, appended to `ids`: a list's lookups
    /// overlap their cache misses (a matrix's 200,000 column names, say).
    pub fn premise_ids(&self, names: &[&[u8]], ids: &mut Vec<Option<u32>>) {
        self.premises.get_many(names, ids);
    }

    /// The hash [`Corpus::premise_id_hashed`] takes for `name` (the actual sets' lemma hash).
    pub fn premise_hash(&self, name: &[u8]) -> u64 {
        self.premises.hash(name)
    }

    /// Hints the cache to bring in where [`Corpus::premise_id_hashed`] of a name hashed `hash`
    /// starts looking (an item's lookup asked as its line is read, ranked a little later).
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        self.premises.prefetch_slot(hash);
    }

    /// [`Corpus::premise_id`] with its hash known already.
    pub fn premise_id_hashed(&self, hash: u64, name: &[u8]) -> Option<u32> {
        self.premises.get_hashed(hash, name)
    }

    /// Premise `id`'s name.
    pub fn premise_name(&self, id: u32) -> &[u8] {
        self.premises.name(id)
    }

    /// Every premise's name in id order: the columns of a matrix that scores every premise
    /// (ReProver's `corpus.all_premises`, the order [`Corpus::premise_name`] numbers).
    pub fn premise_names(&self) -> crate::Names {
        let n = self.premises() as u32;
        let mut names = crate::Names::default();
        names.reserve(
            n as usize,
            (0..n).map(|id| self.premise_name(id).len()).sum(),
        );
        for id in 0..n {
            names.push(self.premise_name(id));
        }
        names
    }

    /// The file premise `id` is defined in.
    pub fn premise_file(&self, id: u32) -> u32 {
        self.premise_file[id as usize]
    }

    /// Where premise `id` ends.
    pub fn premise_end(&self, id: u32) -> Pos {
        self.premise_end[id as usize]
    }

    /// Where the last of file `id`'s premises ends (the greatest end; `None` for a file with no
    /// premise kept): as far as the corpus knows the file. A theorem of the file is one of its
    /// premises in LeanDojo's data, so a goal's position past this is not one of the file's.
    /// O(the file's premises).
    pub fn last_end(&self, id: u32) -> Option<Pos> {
        let r = self.file_premises(id);
        self.premise_end[r.start as usize..r.end as usize]
            .iter()
            .max()
            .copied()
    }

    /// Whether file `file` imports file `other`, directly or transitively.
    #[inline]
    pub fn imports(&self, file: u32, other: u32) -> bool {
        let row = file as usize * self.words;
        self.closure[row + other as usize / 64] >> (other % 64) & 1 == 1
    }

    /// Where premise `premise` comes from, seen from `at`.
    #[inline]
    pub fn origin(&self, at: Place, premise: u32) -> Origin {
        let p = Found {
            id: premise,
            file: self.premise_file[premise as usize],
            end: self.premise_end[premise as usize],
        };
        self.origin_of(at, p)
    }

    /// Whether premise `premise` is accessible at `at`.
    #[inline]
    pub fn accessible(&self, at: Place, premise: u32) -> bool {
        self.origin(at, premise) != Origin::Inaccessible
    }

    /// How many premises are accessible at `at` (each file's premises counted by range).
    pub fn accessible_count(&self, at: Place) -> u64 {
        let mut n = 0u64;
        for f in 0..self.files.len() as u32 {
            if f != at.file && self.imports(at.file, f) {
                n += self.file_premises[f as usize].len() as u64;
            }
        }
        let own = self.file_premises[at.file as usize].clone();
        n + own
            .filter(|&p| self.premise_end[p as usize] <= at.pos)
            .count() as u64
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.files.heap_bytes()
            + self.premises.heap_bytes()
            + self.file_premises.capacity() * std::mem::size_of::<Range<u32>>()
            + self.file_line.capacity() * 8
            + self.premise_file.capacity() * 4
            + self.premise_end.capacity() * std::mem::size_of::<Pos>()
            + self.closure.capacity() * 8
    }
}

impl InputError {
    /// The same error without a byte offset (an error about a file of the corpus, not a byte).
    fn without_byte(mut self) -> Self {
        self.byte = None;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(text: &str) -> Result<Corpus, InputError> {
        Corpus::from_reader(Path::new("corpus.jsonl"), text.as_bytes())
    }

    fn line(path: &str, imports: &[&str], premises: &[(&str, (u32, u32))]) -> String {
        let ps: Vec<String> = premises
            .iter()
            .map(|(n, (l, c))| {
                format!(
                    r#"{{"full_name": "{n}", "code": "theorem {n} : True", "start": [1, 1], "end": [{l}, {c}], "kind": "theorem"}}"#
                )
            })
            .collect();
        let is: Vec<String> = imports.iter().map(|i| format!("\"{i}\"")).collect();
        format!(
            r#"{{"path": "{path}", "imports": [{}], "premises": [{}]}}"#,
            is.join(", "),
            ps.join(", ")
        ) + "\n"
    }

    /// A.lean imports B.lean, which imports C.lean (two deep); D.lean stands apart.
    fn abcd() -> Corpus {
        let text = line("A.lean", &["B.lean"], &[("a1", (3, 5)), ("a2", (9, 1))])
            + &line("B.lean", &["C.lean"], &[("b1", (2, 2))])
            + &line("C.lean", &[], &[("c1", (1, 9)), ("c2", (4, 4))])
            + &line("D.lean", &[], &[("d1", (1, 1))]);
        corpus(&text).unwrap()
    }

    #[test]
    fn a_corpus_lists_at_most_max_corpus_files() {
        let lines = |n: usize| -> String {
            (0..n)
                .map(|i| format!("{{\"path\": \"F{i}.lean\", \"imports\": []}}\n"))
                .collect()
        };
        // One more than the bound: an error at its line (the files before it were taken),
        // before the imports' bitsets are sized.
        let e = corpus(&lines(MAX_CORPUS_FILES + 1)).unwrap_err();
        assert_eq!(e.line, Some(MAX_CORPUS_FILES as u64 + 1));
        assert!(
            e.message.contains(
                "file `F65536.lean` is one more than a corpus may list (65536 files: each file's \
                 transitive imports are held as a bit per file, 512 MiB for that many)"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_files_last_end_is_its_greatest_premise_end() {
        // Premises out of position order; a file of none kept (a `user__.n` name skipped).
        let text = line(
            "A.lean",
            &[],
            &[("a1", (9, 2)), ("a2", (3, 5)), ("a3", (9, 1))],
        ) + &line("B.lean", &[], &[("b.user__.n1", (7, 7))])
            + &line("C.lean", &["A.lean"], &[("c1", (1, 1))]);
        let c = corpus(&text).unwrap();
        let last = |f: &str| c.last_end(c.file_id(f.as_bytes()).unwrap());
        assert_eq!(last("A.lean"), Some(Pos::new(9, 2)));
        assert_eq!(last("B.lean"), None);
        assert_eq!(last("C.lean"), Some(Pos::new(1, 1)));
    }

    #[test]
    fn accessible_premises_follow_imports_and_positions() {
        let c = abcd();
        assert_eq!((c.files(), c.premises()), (4, 6));
        let id = |n: &str| c.premise_id(n.as_bytes()).unwrap();
        let a = c.file_id(b"A.lean").unwrap();
        // A theorem of A.lean at (9, 1): a1 ends before it, a2 ends exactly at it (end <= pos:
        // accessible), b1 through the direct import, c1 and c2 two deep, d1 not imported.
        let at = Place {
            file: a,
            pos: Pos::new(9, 1),
        };
        let got: Vec<(&str, Origin)> = ["a1", "a2", "b1", "c1", "c2", "d1"]
            .iter()
            .map(|n| (*n, c.origin(at, id(n))))
            .collect();
        assert_eq!(
            got,
            [
                ("a1", Origin::InFile),
                ("a2", Origin::InFile),
                ("b1", Origin::Imported),
                ("c1", Origin::Imported),
                ("c2", Origin::Imported),
                ("d1", Origin::Inaccessible),
            ]
        );
        assert_eq!(c.accessible_count(at), 5);
        // One column earlier, a2 ends after the place: not yet accessible.
        let before = Place {
            file: a,
            pos: Pos::new(9, 0),
        };
        assert_eq!(c.origin(before, id("a2")), Origin::Inaccessible);
        assert_eq!(c.origin(before, id("a1")), Origin::InFile);
        // From C.lean nothing of A or B is accessible (imports go one way).
        let at_c = Place {
            file: c.file_id(b"C.lean").unwrap(),
            pos: Pos::new(100, 0),
        };
        assert!(!c.accessible(at_c, id("a1")) && !c.accessible(at_c, id("b1")));
        assert!(c.accessible(at_c, id("c2")));
    }

    #[test]
    fn premises_are_skipped_as_reprover_skips_them() {
        let text = r#"{"path": "X.lean", "imports": [], "premises": [
            {"full_name": null, "code": "x", "end": [1, 1]},
            {"full_name": "_private.user__.n.foo", "code": "x", "end": [1, 1]},
            {"full_name": "empty", "code": "", "end": [1, 1]},
            {"full_name": "[even, odd]", "code": "mutual ...", "end": [1, 1]},
            {"full_name": "kept", "code": "theorem kept : \"quoted\"\n", "end": [2, 3]}]}"#
            .replace('\n', " ");
        let c = corpus(&text).unwrap();
        assert_eq!(c.premises(), 1);
        assert_eq!(c.premise_name(0), b"kept");
        assert_eq!(c.premise_end(0), Pos::new(2, 3));
        assert_eq!(
            c.skipped(),
            Skipped {
                no_name: 1,
                user_n: 1,
                empty_code: 1,
                mutual: 1
            }
        );
    }

    #[test]
    fn bad_corpora_are_named() {
        let err = |t: &str| corpus(t).unwrap_err().to_string();
        let cyc = line("A.lean", &["B.lean"], &[]) + &line("B.lean", &["A.lean"], &[]);
        assert!(
            err(&cyc)
                .contains("the imports form a cycle: `A.lean` imports `B.lean` imports `A.lean`"),
            "{}",
            err(&cyc)
        );
        let unknown = line("A.lean", &["Z.lean"], &[]);
        assert!(err(&unknown).starts_with(
            "corpus.jsonl:1: `A.lean` imports `Z.lean`, which the corpus does not list"
        ));
        let twice = line("A.lean", &[], &[("p", (1, 1))]) + &line("B.lean", &[], &[("p", (1, 1))]);
        assert!(err(&twice).contains(
            "corpus.jsonl:2: premise `p` is defined again in `B.lean`, first in `A.lean` (line 1)"
        ));
        let path_twice = line("A.lean", &[], &[]) + &line("A.lean", &[], &[]);
        assert!(err(&path_twice).contains("file `A.lean` is listed twice (first at line 1)"));
        assert!(err("{\"path\": 3}\n").contains("corpus.jsonl:1: expected a corpus line"));
    }

    /// A corpus of `files` files of 40 premises each (file `F{i}` imports `F{i-1}`): several
    /// parsing batches' worth.
    fn many(files: usize) -> Vec<String> {
        (0..files)
            .map(|i| {
                let ps: Vec<(String, (u32, u32))> = (0..40)
                    .map(|j| (format!("F{i}.p{j}"), (j + 1, 2)))
                    .collect();
                let ps: Vec<(&str, (u32, u32))> =
                    ps.iter().map(|(n, e)| (n.as_str(), *e)).collect();
                let prev = format!("F{}.lean", i.saturating_sub(1));
                let imports: &[&str] = if i == 0 { &[] } else { &[&prev] };
                line(&format!("F{i}.lean"), imports, &ps)
            })
            .collect()
    }

    #[test]
    fn batches_are_added_in_file_order() {
        // 1,000 lines of about 3.3 KB: four batches, parsed on two threads, added in order.
        let mut lines = many(1000);
        lines.insert(500, "\n  \r\n".into()); // blank lines are skipped, and counted
        let text: String = lines.concat();
        assert!(text.len() > 3 * BATCH_BYTES);
        let c = corpus(&text).unwrap();
        assert_eq!((c.files(), c.premises()), (1000, 40_000));
        for (i, f) in [0usize, 499, 500, 999].into_iter().enumerate() {
            let file = c.file_id(format!("F{f}.lean").as_bytes()).unwrap();
            assert_eq!(file as usize, f, "{i}");
            // Ids in file order: file f's premises are 40 f .. 40 f + 39.
            let p = c.premise_id(format!("F{f}.p7").as_bytes()).unwrap();
            assert_eq!(p as usize, 40 * f + 7);
            assert_eq!(c.premise_file(p), file);
            assert_eq!(c.premise_end(p), Pos::new(8, 2));
        }
        let (first, last) = (
            c.file_id(b"F0.lean").unwrap(),
            c.file_id(b"F999.lean").unwrap(),
        );
        assert!(c.imports(last, first) && !c.imports(first, last));
        // The first error in file order is the one reported, whichever batch is parsed first:
        // a premise defined twice at line 300 (batch one) before a syntax error at line 900.
        let mut bad = many(1000);
        bad[299] = line("F299.lean", &["F298.lean"], &[("F3.p1", (1, 1))]);
        bad[899] = "{\"path\": 3}\n".into();
        let e = corpus(&bad.concat()).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "corpus.jsonl:300: premise `F3.p1` is defined again in `F299.lean`, first in \
                 `F3.lean` (line 4)"
            ),
            "{e}"
        );
        let mut bad = many(1000);
        bad[899] = "{\"path\": 3}\n".into();
        let e = corpus(&bad.concat()).unwrap_err().to_string();
        assert!(
            e.starts_with("corpus.jsonl:900: expected a corpus line"),
            "{e}"
        );
        // A line longer than a batch (read on until its end), and a last line without its
        // ending: the same files and ids, line numbers and bytes counted through both.
        let big: Vec<(String, (u32, u32))> = (0..40_000)
            .map(|j| (format!("Big.p{j}"), (j + 1, 1)))
            .collect();
        let big: Vec<(&str, (u32, u32))> = big.iter().map(|(n, e)| (n.as_str(), *e)).collect();
        let big = line("Big.lean", &[], &big);
        assert!(big.len() > BATCH_BYTES);
        let mut long = many(1000);
        long.insert(600, big.clone());
        let text = long.concat();
        let c = corpus(text.strip_suffix('\n').unwrap()).unwrap();
        assert_eq!((c.files(), c.premises()), (1001, 80_000));
        let p = c.premise_id(b"F999.p7").unwrap();
        assert_eq!(p as usize, 40 * 999 + 40_000 + 7);
        assert_eq!(c.premise_id(b"Big.p39999"), Some(40 * 600 + 39_999));
        long[901] = "{\"path\": 3}".into();
        let e = corpus(&long[..902].concat()).unwrap_err();
        assert_eq!(e.byte, Some(long[..901].concat().len() as u64));
        assert!(
            e.to_string()
                .starts_with("corpus.jsonl:902: expected a corpus line"),
            "{e}"
        );
    }

    #[test]
    fn files_may_come_before_their_imports() {
        // Imports are resolved once every file is read: any line order.
        let text =
            line("A.lean", &["B.lean"], &[("a", (1, 1))]) + &line("B.lean", &[], &[("b", (1, 1))]);
        let c = corpus(&text).unwrap();
        let (a, b) = (c.file_id(b"A.lean").unwrap(), c.file_id(b"B.lean").unwrap());
        assert!(c.imports(a, b) && !c.imports(b, a) && !c.imports(a, a));
    }
}
