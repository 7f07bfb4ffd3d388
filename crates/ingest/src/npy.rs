//! Dense score matrices: NumPy `.npy` files of shape `[goals, universe]`, memory-mapped.
//!
//! Supported: format versions 1.0, 2.0 and 3.0; little-endian `f4` (f32) and `f8` (f64), C order.
//! Anything else (big-endian, f16, Fortran order, a shape that is not 2-D, a data size that does
//! not match the shape) is an error naming what was found and what was expected.

use crate::error::{ErrorKind, InputError};
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

/// A memory-mapped `.npy` matrix.
pub struct Matrix {
    path: PathBuf,
    map: Mmap,
    dtype: Dtype,
    rows: usize,
    cols: usize,
    data: usize,
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
        // SAFETY: read-only private mapping, never written; assumes the file is not truncated while
        // in use, like every mapped reader.
        let map = unsafe { Mmap::map(&f) }
            .map_err(|e| InputError::file(ErrorKind::Io, path, format!("cannot map: {e}")))?;
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
        let dtype = match descr.trim_matches(['\'', '"']) {
            "<f4" => Dtype::F32,
            "<f8" => Dtype::F64,
            d => {
                return Err(bad(
                    path,
                    format!("dtype {d}, expected little-endian float32 '<f4' or float64 '<f8'"),
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
            map,
            dtype,
            rows,
            cols,
            data,
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
        (self.map.len() - self.data) as u64
    }

    /// Drops the mapped pages of rows `rows` (done with them): `MADV_DONTNEED` on the pages
    /// covering their bytes. Resident file pages stay at the rows in use, and the page-table
    /// work of unmapping happens now, on the caller's thread, not all at once at the end.
    pub fn release(&self, rows: std::ops::Range<usize>) {
        let w = self.dtype.size() * self.cols;
        crate::input::drop_pages(
            &self.map,
            self.data + rows.start * w..self.data + rows.end * w,
        );
    }

    /// Row `g`, zero-copy.
    pub fn row(&self, g: usize) -> Row<'_> {
        let w = self.dtype.size() * self.cols;
        let bytes = &self.map[self.data + g * w..self.data + (g + 1) * w];
        match self.dtype {
            Dtype::F32 => Row::F32(bytemuck::cast_slice(bytes)),
            Dtype::F64 => Row::F64(bytemuck::cast_slice(bytes)),
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
                "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
                "dtype >f4",
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
