//! Dense score matrices: NumPy `.npy` files of shape `[goals, universe]`, memory-mapped, or
//! arrays already in memory (a NumPy array's buffer, a `Vec`).
//!
//! Supported: format versions 1.0, 2.0 and 3.0; `f4` (f32) and `f8` (f64), little-endian (read in
//! place) or big-endian (each row byte-swapped into a buffer as it is read), C order. Anything else
//! (f16, integers, Fortran order, a shape that is not 2-D, a data size that does not match the
//! shape) is an error naming what was found and what was expected.

use crate::error::{ErrorKind, InputError};
use crate::mapped::Stamp;
use memmap2::Mmap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Element type of a matrix.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// `<f4`
    F32,
    /// `<f8`
    F64,
}

impl Dtype {
    fn size(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F64 => 8,
        }
    }
}

/// One row of scores.
#[derive(Copy, Clone, Debug)]
pub enum Row<'a> {
    /// f32 scores.
    F32(&'a [f32]),
    /// f64 scores.
    F64(&'a [f64]),
}

/// Where a matrix's bytes are.
enum Storage {
    /// A mapped file.
    Mapped(Mmap),
    /// Memory owned by someone else (`owner` keeps it alive and unchanged).
    Borrowed {
        ptr: *const u8,
        len: usize,
        _owner: Box<dyn std::any::Any + Send + Sync>,
    },
}

// SAFETY: the borrowed bytes are only read, and `from_raw`'s caller promises they stay valid and
// unchanged while the matrix lives; `owner` is `Send + Sync`.
unsafe impl Send for Storage {}
// SAFETY: as above: shared reads of memory that nobody writes.
unsafe impl Sync for Storage {}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped(m) => m,
            // SAFETY: `from_raw`'s contract: `len` readable bytes at `ptr` while `self` lives.
            Storage::Borrowed { ptr, len, .. } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
        }
    }
}

/// A dense score matrix `[goals, universe]`: a memory-mapped `.npy` file ([`Matrix::open`]) or
/// scores already in memory ([`Matrix::from_f32`], [`Matrix::from_f64`], [`Matrix::from_raw`]).
pub struct Matrix {
    path: PathBuf,
    storage: Storage,
    /// A mapped file as it was mapped.
    stamp: Option<Stamp>,
    dtype: Dtype,
    /// Big-endian values: rows are byte-swapped as they are read ([`Matrix::row_in`]).
    swapped: bool,
    rows: usize,
    cols: usize,
    data: usize,
}

/// A row's buffer, for big-endian matrices ([`Matrix::row_in`]): reused from row to row.
#[derive(Default)]
pub struct RowBuf {
    f32s: Vec<f32>,
    f64s: Vec<f64>,
}

fn bad(path: &Path, what: impl Into<String>) -> InputError {
    InputError::file(
        ErrorKind::Syntax,
        path,
        format!("not a usable .npy matrix: {}", what.into()),
    )
}

/// The value of `'key':` in a NumPy header dict (text up to the next top-level comma or brace).
fn field<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
    if let Some(r) = rest.strip_prefix('(') {
        return Some(&r[..r.find(')')?]);
    }
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim())
}

impl Matrix {
    /// Maps and checks `path`.
    pub fn open(path: &Path) -> Result<Matrix, InputError> {
        let f = File::open(path)
            .map_err(|e| InputError::file(ErrorKind::Io, path, format!("cannot open: {e}")))?;
        // SAFETY: read-only private mapping, never written; a file changed under it is found by
        // its stamp ([`Matrix::check_unchanged`]) or, cut short, reported on SIGBUS.
        let map = unsafe { crate::mapped::map(&f, path) }
            .map_err(|e| InputError::file(ErrorKind::Io, path, format!("cannot map: {e}")))?;
        let stamp = Some(Stamp::new(std::sync::Arc::new(f), map.len() as u64));
        if map.len() < 10 || &map[..6] != b"\x93NUMPY" {
            return Err(bad(path, "missing the \\x93NUMPY magic"));
        }
        let (hlen, hstart) = match map[6] {
            1 => (u16::from_le_bytes([map[8], map[9]]) as usize, 10),
            2 | 3 if map.len() >= 12 => (
                u32::from_le_bytes(map[8..12].try_into().expect("4")) as usize,
                12,
            ),
            v => {
                return Err(bad(
                    path,
                    format!("format version {v}.{}, expected 1.0, 2.0 or 3.0", map[7]),
                ))
            }
        };
        let data = hstart + hlen;
        if data > map.len() {
            return Err(bad(path, "the header runs past the end of the file"));
        }
        let header =
            std::str::from_utf8(&map[hstart..data]).map_err(|_| bad(path, "header is not text"))?;
        let descr = field(header, "descr").ok_or_else(|| bad(path, "header has no 'descr'"))?;
        let (dtype, swapped) = match descr.trim_matches(['\'', '"']) {
            "<f4" => (Dtype::F32, false),
            "<f8" => (Dtype::F64, false),
            ">f4" => (Dtype::F32, true),
            ">f8" => (Dtype::F64, true),
            d => {
                return Err(bad(
                    path,
                    format!(
                        "dtype {d}, expected float32 ('<f4' or '>f4') or float64 ('<f8' or '>f8')"
                    ),
                ))
            }
        };
        match field(header, "fortran_order") {
            Some("False") => {}
            Some(v) => {
                return Err(bad(
                    path,
                    format!("fortran_order {v}, expected False (C order)"),
                ))
            }
            None => return Err(bad(path, "header has no 'fortran_order'")),
        }
        let shape = field(header, "shape").ok_or_else(|| bad(path, "header has no 'shape'"))?;
        let dims: Vec<usize> = shape
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse()
                    .map_err(|_| bad(path, format!("shape ({shape}) is not a tuple of integers")))
            })
            .collect::<Result<_, _>>()?;
        let [rows, cols] = dims[..] else {
            return Err(bad(
                path,
                format!("shape ({shape}), expected 2 dimensions [goals, universe]"),
            ));
        };
        let want = rows
            .checked_mul(cols)
            .and_then(|n| n.checked_mul(dtype.size()));
        if want != Some(map.len() - data) {
            return Err(bad(
                path,
                format!(
                    "shape ({rows}, {cols}) of {descr} needs {} bytes of data, the file has {}",
                    want.map_or("at least 2^64".to_string(), |w| w.to_string()),
                    map.len() - data
                ),
            ));
        }
        if data % dtype.size() != 0 {
            return Err(bad(
                path,
                format!(
                    "data starts at byte {data}, not aligned to {} bytes",
                    dtype.size()
                ),
            ));
        }
        Ok(Matrix {
            path: path.to_path_buf(),
            storage: Storage::Mapped(map),
            stamp,
            dtype,
            swapped,
            rows,
            cols,
            data,
        })
    }

    /// A matrix of `rows` rows of `cols` f32 scores, row after row, named `name` in errors.
    pub fn from_f32(
        name: impl Into<PathBuf>,
        rows: usize,
        cols: usize,
        scores: Vec<f32>,
    ) -> Result<Matrix, InputError> {
        Self::from_vec(name.into(), rows, cols, scores, Dtype::F32)
    }

    /// [`Matrix::from_f32`] for f64 scores.
    pub fn from_f64(
        name: impl Into<PathBuf>,
        rows: usize,
        cols: usize,
        scores: Vec<f64>,
    ) -> Result<Matrix, InputError> {
        Self::from_vec(name.into(), rows, cols, scores, Dtype::F64)
    }

    /// The matrix over `scores`, whose element type `dtype` names (f32 or f64: the two callers).
    fn from_vec<T: Copy + Send + Sync + 'static>(
        name: PathBuf,
        rows: usize,
        cols: usize,
        scores: Vec<T>,
        dtype: Dtype,
    ) -> Result<Matrix, InputError> {
        Self::check_len(&name, rows, cols, scores.len())?;
        let (ptr, len) = (
            scores.as_ptr().cast::<u8>(),
            std::mem::size_of_val(scores.as_slice()),
        );
        // SAFETY: the Vec's heap buffer is owned by the matrix and never written or moved.
        unsafe { Matrix::from_raw(name, ptr, len, rows, cols, dtype, false, Box::new(scores)) }
    }

    fn check_len(name: &Path, rows: usize, cols: usize, n: usize) -> Result<(), InputError> {
        if rows.checked_mul(cols) != Some(n) {
            return Err(bad(name, format!("shape ({rows}, {cols}) but {n} scores")));
        }
        Ok(())
    }

    /// A matrix over `len` bytes at `ptr`: `rows` rows of `cols` scores of `dtype`, C order,
    /// big-endian when `big_endian`; named `name` in errors. The shape must match `len`, and
    /// `ptr` be aligned to the element size (errors otherwise).
    ///
    /// # Safety
    /// `len` bytes at `ptr` stay readable and unchanged while the matrix lives: `owner` (kept
    /// until the matrix is dropped, on any thread) is what keeps them so, a NumPy array say.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn from_raw(
        name: impl Into<PathBuf>,
        ptr: *const u8,
        len: usize,
        rows: usize,
        cols: usize,
        dtype: Dtype,
        big_endian: bool,
        owner: Box<dyn std::any::Any + Send + Sync>,
    ) -> Result<Matrix, InputError> {
        let name = name.into();
        let want = rows
            .checked_mul(cols)
            .and_then(|n| n.checked_mul(dtype.size()));
        if want != Some(len) {
            return Err(bad(
                &name,
                format!(
                    "shape ({rows}, {cols}) needs {} bytes, given {len}",
                    want.map_or("at least 2^64".to_string(), |w| w.to_string())
                ),
            ));
        }
        if len > 0 && (ptr as usize) % dtype.size() != 0 {
            return Err(bad(
                &name,
                format!("data not aligned to {} bytes", dtype.size()),
            ));
        }
        Ok(Matrix {
            path: name,
            storage: Storage::Borrowed {
                ptr: if len == 0 {
                    std::ptr::NonNull::<u64>::dangling().as_ptr().cast()
                } else {
                    ptr
                },
                len,
                _owner: owner,
            },
            stamp: None,
            dtype,
            swapped: big_endian,
            rows,
            cols,
            data: 0,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Number of goals (rows).
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Universe size (columns).
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Element type.
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }
    /// Bytes of matrix data.
    pub fn data_bytes(&self) -> u64 {
        (self.storage.bytes().len() - self.data) as u64
    }

    /// Whether the values are big-endian (read through [`Matrix::row_in`]).
    pub fn big_endian(&self) -> bool {
        self.swapped
    }

    /// An error if a mapped file is no longer as it was mapped (its length or modification time
    /// moved): the rows read may be of another file. Scores in memory are never checked.
    pub fn check_unchanged(&self) -> Result<(), InputError> {
        match &self.stamp {
            Some(s) => s.check(&self.path),
            None => Ok(()),
        }
    }

    /// Drops the mapped pages of rows `rows` (done with them): `MADV_DONTNEED` on the pages
    /// covering their bytes. Resident file pages stay at the rows in use, and the page-table
    /// work of unmapping happens now, on the caller's thread, not all at once at the end.
    pub fn release(&self, rows: std::ops::Range<usize>) {
        let w = self.dtype.size() * self.cols;
        if let Storage::Mapped(map) = &self.storage {
            crate::input::drop_pages(map, self.data + rows.start * w..self.data + rows.end * w);
        }
    }

    /// Row `g`'s bytes.
    fn row_bytes(&self, g: usize) -> &[u8] {
        let w = self.dtype.size() * self.cols;
        &self.storage.bytes()[self.data + g * w..self.data + (g + 1) * w]
    }

    /// Row `g`, zero-copy: a little-endian matrix's only (a big-endian one's through
    /// [`Matrix::row_in`]).
    pub fn row(&self, g: usize) -> Row<'_> {
        assert!(
            !self.swapped,
            "a big-endian matrix's rows are read with row_in"
        );
        let bytes = self.row_bytes(g);
        match self.dtype {
            Dtype::F32 => Row::F32(bytemuck::cast_slice(bytes)),
            Dtype::F64 => Row::F64(bytemuck::cast_slice(bytes)),
        }
    }

    /// Row `g`: in place when little-endian, else byte-swapped into `buf`.
    pub fn row_in<'a>(&'a self, g: usize, buf: &'a mut RowBuf) -> Row<'a> {
        if !self.swapped {
            return self.row(g);
        }
        let bytes = self.row_bytes(g);
        match self.dtype {
            Dtype::F32 => {
                buf.f32s.clear();
                (buf.f32s).extend(
                    bytes
                        .chunks_exact(4)
                        .map(|b| f32::from_be_bytes(b.try_into().expect("4 bytes"))),
                );
                Row::F32(&buf.f32s)
            }
            Dtype::F64 => {
                buf.f64s.clear();
                (buf.f64s).extend(
                    bytes
                        .chunks_exact(8)
                        .map(|b| f64::from_be_bytes(b.try_into().expect("8 bytes"))),
                );
                Row::F64(&buf.f64s)
            }
        }
    }
}

/// Writes the header of a C-order little-endian float32 `.npy` file of shape `[rows, cols]`; the
/// caller writes `rows * cols` f32 values after it.
pub fn write_f32_header(out: &mut dyn Write, rows: usize, cols: usize) -> io::Result<()> {
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    // Magic (6) + version (2) + length (2) + dict + padding + newline: a multiple of 64.
    let unpadded = 10 + dict.len() + 1;
    let pad = (64 - unpadded % 64) % 64;
    out.write_all(b"\x93NUMPY\x01\x00")?;
    out.write_all(&((dict.len() + pad + 1) as u16).to_le_bytes())?;
    out.write_all(dict.as_bytes())?;
    out.write_all(&vec![b' '; pad])?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, header: &str, data: &[u8], version: u8) -> PathBuf {
        let p = dir.join(name);
        let mut b = b"\x93NUMPY".to_vec();
        b.push(version);
        b.push(0);
        let mut h = header.to_string();
        let base = if version == 1 { 10 } else { 12 };
        while (base + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        if version == 1 {
            b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        } else {
            b.extend_from_slice(&(h.len() as u32).to_le_bytes());
        }
        b.extend_from_slice(h.as_bytes());
        b.extend_from_slice(data);
        std::fs::write(&p, b).unwrap();
        p
    }

    #[test]
    fn reads_f32_and_f64() {
        let dir = tempfile::tempdir().unwrap();
        let f32s: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let p = write(
            dir.path(),
            "a.npy",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
            &f32s,
            1,
        );
        let m = Matrix::open(&p).unwrap();
        assert_eq!((m.rows(), m.cols(), m.dtype()), (2, 3, Dtype::F32));
        assert!(matches!(m.row(1), Row::F32(r) if r == [4.0, 5.0, 6.0]));
        let f64s: Vec<u8> = [1.5f64, 2.5].iter().flat_map(|x| x.to_le_bytes()).collect();
        let p = write(
            dir.path(),
            "b.npy",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }",
            &f64s,
            2,
        );
        assert!(matches!(Matrix::open(&p).unwrap().row(0), Row::F64(r) if r == [1.5, 2.5]));
        // Our own writer's header is readable.
        let mut b = Vec::new();
        write_f32_header(&mut b, 2, 3).unwrap();
        assert_eq!(b.len() % 64, 0);
        b.extend_from_slice(&f32s);
        let p = dir.path().join("c.npy");
        std::fs::write(&p, b).unwrap();
        assert_eq!(Matrix::open(&p).unwrap().cols(), 3);
    }

    /// Big-endian files (`>f4`, `>f8`) and matrices in memory give the rows a little-endian
    /// file gives: the same values, read through `row_in`.
    #[test]
    fn big_endian_and_in_memory_rows_equal_little_endian_ones() {
        let dir = tempfile::tempdir().unwrap();
        let v: Vec<f64> = vec![0.5, -1.25, 3.0e-7, 2.0, f64::MAX, -0.0];
        let dict =
            |d: &str| format!("{{'descr': '{d}', 'fortran_order': False, 'shape': (2, 3), }}");
        let le32: Vec<u8> = v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect();
        let be32: Vec<u8> = v.iter().flat_map(|&x| (x as f32).to_be_bytes()).collect();
        let be64: Vec<u8> = v.iter().flat_map(|&x| x.to_be_bytes()).collect();
        let le = Matrix::open(&write(dir.path(), "le.npy", &dict("<f4"), &le32, 1)).unwrap();
        let be = Matrix::open(&write(dir.path(), "be.npy", &dict(">f4"), &be32, 1)).unwrap();
        let be8 = Matrix::open(&write(dir.path(), "be8.npy", &dict(">f8"), &be64, 1)).unwrap();
        let mem = Matrix::from_f64("mem", 2, 3, v.clone()).unwrap();
        assert!(be.big_endian() && !le.big_endian());
        let mut buf = RowBuf::default();
        for g in 0..2 {
            let Row::F32(want) = le.row(g) else {
                panic!("f32")
            };
            let want = want.to_vec();
            assert_eq!(
                want,
                v[3 * g..3 * g + 3]
                    .iter()
                    .map(|&x| x as f32)
                    .collect::<Vec<_>>()
            );
            let Row::F32(got) = be.row_in(g, &mut buf) else {
                panic!("f32")
            };
            assert_eq!(got, &want[..]);
            let Row::F64(got) = be8.row_in(g, &mut buf) else {
                panic!("f64")
            };
            assert_eq!(got, &v[3 * g..3 * g + 3]);
            let Row::F64(got) = mem.row(g) else {
                panic!("f64")
            };
            assert_eq!(got, &v[3 * g..3 * g + 3]);
        }
        assert!(Matrix::from_f32("short", 2, 3, vec![0.0; 5])
            .err()
            .unwrap()
            .to_string()
            .contains("shape (2, 3) but 5 scores"));
    }

    #[test]
    fn wrong_dtype_shape_and_header_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let d = vec![0u8; 24];
        let cases = [
            (
                "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }",
                "dtype <f2, expected",
            ),
            (
                "{'descr': '>f2', 'fortran_order': False, 'shape': (2, 3), }",
                "dtype >f2",
            ),
            (
                "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
                "dtype <i4",
            ),
            (
                "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                "fortran_order True",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }",
                "expected 2 dimensions",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }",
                "needs 32 bytes of data, the file has 24",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }",
                "not a tuple of integers",
            ),
            ("{'fortran_order': False, 'shape': (2, 3), }", "no 'descr'"),
        ];
        for (i, (h, want)) in cases.iter().enumerate() {
            let p = write(dir.path(), &format!("{i}.npy"), h, &d, 1);
            let e = Matrix::open(&p)
                .err()
                .unwrap_or_else(|| panic!("{h} opened"));
            assert!(e.to_string().contains(want), "{h}: {e}");
        }
        let p = dir.path().join("junk.npy");
        std::fs::write(&p, b"PK\x03\x04 not numpy").unwrap();
        assert!(Matrix::open(&p)
            .err()
            .unwrap()
            .to_string()
            .contains("magic"));
        let p = write(dir.path(), "v9.npy", "{}", &d, 9);
        assert!(Matrix::open(&p)
            .err()
            .unwrap()
            .to_string()
            .contains("format version 9.0"));
        let mut t = std::fs::read(dir.path().join("0.npy")).unwrap();
        t.truncate(40);
        std::fs::write(dir.path().join("t.npy"), &t).unwrap();
        assert!(Matrix::open(&dir.path().join("t.npy"))
            .err()
            .unwrap()
            .to_string()
            .contains("past the end"));
    }
}
