//! A corpus in binary form: what [`Corpus`] holds, written once (`lemma-eval convert --corpus`,
//! [`Corpus::write_binary`]) and read back with no parsing, no import resolution and no closure to
//! compute. [`Corpus::read`] knows the form by its first eight bytes.
//!
//! Layout, little-endian; `F` files, `P` premises, `W` words a closure row (`max(1, ⌈F/64⌉)`),
//! each section starting at a multiple of 8 bytes (zero padding):
//!
//! ```text
//! header (72 bytes): "LECORPUS", version u32 (1), F u32, P u32, W u32,
//!                    file name bytes u64, premise name bytes u64,
//!                    skipped premises u64 × 4 (no name, user__.n, empty code, mutual)
//! file name ends      u64 × F       (cumulative: file i's path is bytes [end(i-1), end(i)))
//! file names          bytes
//! file premise starts u32 × (F + 1) (file i's premises are ids [start(i), start(i+1)))
//! file lines          u64 × F       (the line of corpus.jsonl each file was read from)
//! premise name ends   u64 × P
//! premise names       bytes
//! premise ends        (line u32, column u32) × P
//! closures            u64 × F × W   (file i's transitive imports, a bitset over the files)
//! crc32 of everything above, u32
//! ```
//!
//! Reading checks the length the header implies, the checksum, that every offset rises to its
//! section's end, that the first premise starts at 0 and the last file ends at `P`, and that no
//! name is listed twice; a file failing one is refused as corrupt, never read in part. The names'
//! table is built again as the file is read (hashes are not stored: a binary corpus stays right
//! whatever hash a later version uses). 200,000 premises in 4,000 files take about 10 MB.

use super::{Corpus, Pos, Skipped};
use crate::error::{ErrorKind, InputError};
use crate::truth::Interner;
use std::io::{self, Write};
use std::path::Path;

/// The first eight bytes of a binary corpus.
pub(crate) const MAGIC: &[u8; 8] = b"LECORPUS";
const VERSION: u32 = 1;
const HEADER: usize = 72;

fn corrupt(path: &Path, what: impl std::fmt::Display) -> InputError {
    InputError::file(
        ErrorKind::Syntax,
        path,
        format!("corrupt or truncated binary corpus: {what}"),
    )
}

/// A writer that counts its bytes and checksums them.
struct Sink<W> {
    out: W,
    crc: crc32fast::Hasher,
    len: usize,
}

impl<W: Write> Sink<W> {
    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.crc.update(b);
        self.len += b.len();
        self.out.write_all(b)
    }

    fn pad(&mut self) -> io::Result<()> {
        let n = self.len.next_multiple_of(8) - self.len;
        self.put(&[0u8; 8][..n])
    }

    fn u32s(&mut self, v: impl Iterator<Item = u32>) -> io::Result<()> {
        for x in v {
            self.put(&x.to_le_bytes())?;
        }
        self.pad()
    }

    fn u64s(&mut self, v: impl Iterator<Item = u64>) -> io::Result<()> {
        for x in v {
            self.put(&x.to_le_bytes())?;
        }
        Ok(())
    }

    /// Names `0..n` of `names`: their cumulative ends, then their bytes.
    fn names(&mut self, names: &Interner) -> io::Result<()> {
        let mut end = 0u64;
        self.u64s((0..names.len() as u32).map(|i| {
            end += names.name(i).len() as u64;
            end
        }))?;
        for i in 0..names.len() as u32 {
            self.put(names.name(i))?;
        }
        self.pad()
    }
}

/// Reads a validated binary corpus's sections in order.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    /// The next `n` bytes (the length was checked against the header first).
    fn take(&mut self, n: usize) -> &'a [u8] {
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        s
    }

    fn pad(&mut self) {
        self.at = self.at.next_multiple_of(8);
    }

    fn u32s(&mut self, n: usize) -> Vec<u32> {
        let v = (self.take(n * 4).chunks_exact(4))
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        self.pad();
        v
    }

    fn u64s(&mut self, n: usize) -> Vec<u64> {
        (self.take(n * 8).chunks_exact(8))
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    }
}

/// The byte length of a binary corpus of `f` files, `p` premises, `w` words a row and `fb`, `pb`
/// name bytes (`None`: past `u64`).
fn length(f: u64, p: u64, w: u64, fb: u64, pb: u64) -> Option<u64> {
    let pad = |n: u64| n.checked_next_multiple_of(8);
    let sections = [
        f.checked_mul(8)?,
        pad(fb)?,
        pad(f.checked_add(1)?.checked_mul(4)?)?,
        f.checked_mul(8)?,
        p.checked_mul(8)?,
        pad(pb)?,
        p.checked_mul(8)?,
        f.checked_mul(w)?.checked_mul(8)?,
    ];
    sections
        .iter()
        .try_fold(HEADER as u64 + 4, |a, &s| a.checked_add(s))
}

/// Names from their cumulative `ends` over `bytes`, interned in order into a new interner; an
/// error names what is wrong (an offset that falls, a name listed twice).
fn intern(ends: &[u64], bytes: &[u8], what: &str) -> Result<Interner, String> {
    let mut names: Vec<&[u8]> = Vec::with_capacity(ends.len());
    let mut start = 0usize;
    for (i, &end) in ends.iter().enumerate() {
        let end = usize::try_from(end)
            .ok()
            .filter(|&e| e >= start && e <= bytes.len());
        let Some(end) = end else {
            return Err(format!("{what} name {i}'s end is out of order"));
        };
        names.push(&bytes[start..end]);
        start = end;
    }
    if start != bytes.len() {
        return Err(format!("{what} names end before their section does"));
    }
    let mut interner = Interner::new();
    interner.reserve(names.len());
    let mut ids = Vec::new();
    interner.intern_many(&names, &mut ids);
    if let Some(i) = ids.iter().enumerate().position(|(i, &id)| id as usize != i) {
        return Err(format!(
            "{what} `{}` is listed twice",
            String::from_utf8_lossy(names[i])
        ));
    }
    Ok(interner)
}

impl Corpus {
    /// Writes this corpus in binary form to `out`: the layout of docs/FORMAT.md ("Binary
    /// corpora"), read back by [`Corpus::read`].
    pub fn write_binary(&self, out: impl Write) -> io::Result<()> {
        let mut s = Sink {
            out,
            crc: crc32fast::Hasher::new(),
            len: 0,
        };
        let (f, p) = (self.files.len(), self.premises.len());
        let too_many = |n: usize| {
            u32::try_from(n).map_err(|_| io::Error::other("more than 2^32 - 1 files or premises"))
        };
        let name_bytes = |n: &Interner| {
            (0..n.len() as u32)
                .map(|i| n.name(i).len() as u64)
                .sum::<u64>()
        };
        s.put(MAGIC)?;
        s.put(&VERSION.to_le_bytes())?;
        for n in [f, p, self.words] {
            s.put(&too_many(n)?.to_le_bytes())?;
        }
        let k = self.skipped;
        s.u64s(
            [name_bytes(&self.files), name_bytes(&self.premises)]
                .into_iter()
                .chain([k.no_name, k.user_n, k.empty_code, k.mutual]),
        )?;
        s.names(&self.files)?;
        s.u32s(
            std::iter::once(0)
                .chain(self.file_premises.iter().map(|r| r.end))
                .take(f + 1),
        )?;
        s.u64s(self.file_line.iter().copied())?;
        s.names(&self.premises)?;
        s.u32s(self.premise_end.iter().flat_map(|e| [e.line, e.col]))?;
        s.u64s(self.closure.iter().copied())?;
        let crc = s.crc.clone().finalize();
        s.out.write_all(&crc.to_le_bytes())?;
        s.out.flush()
    }

    /// Writes this corpus in binary form to the file `path`, whole or not at all (a temporary
    /// file renamed over it once written); the file it was read from is never replaced.
    pub fn write_binary_file(&self, path: &Path) -> Result<(), InputError> {
        let failed = |e: io::Error| {
            InputError::file(ErrorKind::Io, path, format!("cannot write the corpus: {e}"))
        };
        lemma_outfile::check_distinct(&[path], &[&self.path]).map_err(failed)?;
        let file = lemma_outfile::OutFile::create(path).map_err(failed)?;
        let mut out = io::BufWriter::with_capacity(1 << 20, file);
        self.write_binary(&mut out).map_err(failed)?;
        let file = out.into_inner().map_err(|e| failed(e.into_error()))?;
        file.commit().map_err(failed)
    }

    /// Reads a binary corpus whose bytes are `b` (starting with [`MAGIC`]), named `path`.
    pub(crate) fn from_binary(path: &Path, b: &[u8]) -> Result<Corpus, InputError> {
        if b.len() < HEADER + 4 {
            return Err(corrupt(
                path,
                format!("{} bytes, shorter than its header", b.len()),
            ));
        }
        let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
        let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        let version = u32_at(8);
        if version != VERSION {
            return Err(InputError::file(
                ErrorKind::Syntax,
                path,
                format!(
                    "binary corpus version {version}: this lemma-eval reads version {VERSION} \
                     (convert the corpus.jsonl again)"
                ),
            ));
        }
        let (f, p, w) = (u32_at(12) as u64, u32_at(16) as u64, u32_at(20) as u64);
        let (fb, pb) = (u64_at(24), u64_at(32));
        if f > super::MAX_CORPUS_FILES as u64 {
            return Err(corrupt(
                path,
                format!(
                    "{f} files, more than a corpus may list ({})",
                    super::MAX_CORPUS_FILES
                ),
            ));
        }
        if w != f.div_ceil(64).max(1) {
            return Err(corrupt(path, format!("{w} words a row for {f} files")));
        }
        if length(f, p, w, fb, pb) != Some(b.len() as u64) {
            return Err(corrupt(
                path,
                format!(
                    "{} bytes, but its header ({f} files, {p} premises) says otherwise",
                    b.len()
                ),
            ));
        }
        let (body, crc) = b.split_at(b.len() - 4);
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
            return Err(corrupt(path, "checksum mismatch"));
        }
        let (f, p, w, fb, pb) = (f as usize, p as usize, w as usize, fb as usize, pb as usize);
        let skipped = Skipped {
            no_name: u64_at(40),
            user_n: u64_at(48),
            empty_code: u64_at(56),
            mutual: u64_at(64),
        };
        let mut c = Cursor { b, at: HEADER };
        let bad = |m: String| corrupt(path, m);
        let file_ends = c.u64s(f);
        let file_bytes = c.take(fb);
        c.pad();
        let starts = c.u32s(f + 1);
        let file_line = c.u64s(f);
        let premise_ends = c.u64s(p);
        let premise_bytes = c.take(pb);
        c.pad();
        let ends = c.u32s(2 * p);
        let closure = c.u64s(f * w);
        if starts[0] != 0 || starts[f] as usize != p || starts.windows(2).any(|s| s[0] > s[1]) {
            return Err(bad(
                "the files' premise ranges do not cover the premises".into()
            ));
        }
        let files = intern(&file_ends, file_bytes, "file").map_err(bad)?;
        let premises = intern(&premise_ends, premise_bytes, "premise").map_err(bad)?;
        let mut premise_file = Vec::with_capacity(p);
        for (i, s) in starts.windows(2).enumerate() {
            premise_file.extend(std::iter::repeat_n(i as u32, (s[1] - s[0]) as usize));
        }
        Ok(Corpus {
            path: path.to_path_buf(),
            files,
            file_premises: starts.windows(2).map(|s| s[0]..s[1]).collect(),
            file_line,
            premises,
            premise_file,
            premise_end: ends.chunks_exact(2).map(|e| Pos::new(e[0], e[1])).collect(),
            closure,
            words: w,
            skipped,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = concat!(
        r#"{"path": "A.lean", "imports": [], "premises": [{"full_name": "a1", "code": "x", "start": [1, 1], "end": [2, 5]}, {"full_name": "a2", "code": "y", "end": [4, 1]}]}"#,
        "\n",
        r#"{"path": "B.lean", "imports": ["A.lean"], "premises": [{"full_name": "b1", "code": "z", "end": [3, 2]}, {"full_name": null, "code": "w", "end": [5, 1]}]}"#,
        "\n",
        r#"{"path": "C.lean", "imports": ["B.lean"], "premises": [{"full_name": "c1", "code": "", "end": [1, 9]}, {"full_name": "c2", "code": "v", "end": [7, 7]}]}"#,
        "\n",
    );

    fn text() -> Corpus {
        Corpus::from_reader(Path::new("corpus.jsonl"), TEXT.as_bytes()).unwrap()
    }

    fn binary(c: &Corpus) -> Vec<u8> {
        let mut out = Vec::new();
        c.write_binary(&mut out).unwrap();
        out
    }

    /// Everything a reader can ask of a corpus, for comparing two.
    fn described(c: &Corpus) -> String {
        let mut s = format!(
            "{} files, {} premises, {:?}\n",
            c.files(),
            c.premises(),
            c.skipped()
        );
        for f in 0..c.files() as u32 {
            s += &format!(
                "file {} {:?} {:?} line {}\n",
                String::from_utf8_lossy(c.file_path(f)),
                c.file_premises(f),
                (0..c.files() as u32)
                    .filter(|&g| c.imports(f, g))
                    .collect::<Vec<_>>(),
                c.file_line[f as usize]
            );
        }
        for p in 0..c.premises() as u32 {
            let name = c.premise_name(p);
            s += &format!(
                "premise {} id {:?} file {} end {:?}\n",
                String::from_utf8_lossy(name),
                c.premise_id(name),
                c.premise_file(p),
                c.premise_end(p)
            );
        }
        s
    }

    #[test]
    fn binary_form_reads_back_as_the_text_read() {
        let c = text();
        let b = binary(&c);
        assert_eq!(&b[..8], MAGIC);
        // 3 files, 4 premises kept (one without a name, one with empty code skipped).
        assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), 3);
        assert_eq!(u32::from_le_bytes(b[16..20].try_into().unwrap()), 4);
        assert_eq!(b.len() % 8, 4, "sections 8-aligned, then the crc32");
        let back = Corpus::from_binary(Path::new("c.bin"), &b).unwrap();
        assert_eq!(described(&back), described(&c));
        assert!(described(&c).contains("file C.lean 3..4 [0, 1] line 3"));
        assert_eq!(back.skipped().no_name, 1);
        assert_eq!(back.skipped().empty_code, 1);
        // Accessibility as the text read gives it: b1 (ends 3:2) from C, not from A.
        let b1 = back.premise_id(b"b1").unwrap();
        let at_c = Place {
            file: back.file_id(b"C.lean").unwrap(),
            pos: Pos::new(1, 1),
        };
        let at_a = Place {
            file: back.file_id(b"A.lean").unwrap(),
            pos: Pos::new(9, 9),
        };
        assert_eq!(back.origin(at_c, b1), Origin::Imported);
        assert_eq!(back.origin(at_a, b1), Origin::Inaccessible);
        assert_eq!(binary(&back), b, "written again, the same bytes");
    }

    use super::super::{Origin, Place};

    #[test]
    fn an_empty_corpus_round_trips() {
        let c = Corpus::from_reader(Path::new("e.jsonl"), &b""[..]).unwrap();
        let b = binary(&c);
        let back = Corpus::from_binary(Path::new("e.bin"), &b).unwrap();
        assert_eq!((back.files(), back.premises()), (0, 0));
    }

    #[test]
    fn damage_is_named_and_refused() {
        let good = binary(&text());
        let refuse = |b: &[u8], want: &str| {
            let e = Corpus::from_binary(Path::new("c.bin"), b).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
            assert!(e.to_string().contains("c.bin"), "{e}");
        };
        refuse(&good[..40], "shorter than its header");
        refuse(
            &good[..good.len() - 1],
            "header (3 files, 4 premises) says otherwise",
        );
        let mut v = good.clone();
        v[8] = 2;
        refuse(&v, "binary corpus version 2");
        // Every byte past the header, flipped alone: the checksum catches it.
        for at in HEADER..good.len() {
            let mut v = good.clone();
            v[at] ^= 0x20;
            refuse(&v, "checksum mismatch");
        }
        // A header count changed: the length no longer matches.
        let mut v = good.clone();
        v[16] = 5;
        refuse(&v, "says otherwise");
        let mut v = good.clone();
        v[20] = 2;
        refuse(&v, "2 words a row for 3 files");
        // More files than a corpus may list: refused before anything is sized by them.
        let mut v = good.clone();
        v[12..16].copy_from_slice(&(super::super::MAX_CORPUS_FILES as u32 + 1).to_le_bytes());
        refuse(&v, "65537 files, more than a corpus may list (65536)");
    }

    /// A body made consistent again (its checksum recomputed) after a change.
    fn resealed(mut v: Vec<u8>) -> Vec<u8> {
        let n = v.len() - 4;
        let crc = crc32fast::hash(&v[..n]);
        v[n..].copy_from_slice(&crc.to_le_bytes());
        v
    }

    #[test]
    fn a_checksummed_but_inconsistent_file_is_refused_not_read() {
        let good = binary(&text());
        // The first file name end (at HEADER) made larger than the next: out of order.
        let mut v = good.clone();
        v[HEADER] = 200;
        refuse_at(&resealed(v), "file name 0's end is out of order");
        // Premise name "a2" made "a1": listed twice.
        let at = (good.windows(4).position(|w| w == b"a1a2").unwrap()) + 3;
        let mut v = good.clone();
        v[at] = b'1';
        refuse_at(&resealed(v), "premise `a1` is listed twice");
        fn refuse_at(b: &[u8], want: &str) {
            let e = Corpus::from_binary(Path::new("c.bin"), b).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
        }
    }
}
