//! A BF16 working copy of an F16 GGUF, for CPUs with AVX512-BF16.
//!
//! ## Why
//! On one thread, a 256-token MiniLM embedding spends ~63% of its time in
//! llama.cpp's F16 matrix kernel (tinyBLAS), which already runs close to
//! the FMA peak of the core; F32 weights or 512-bit F16 kernels are no
//! faster (measured). The remaining time is in ggml's non-matrix kernels
//! (GELU, flash attention), which no runtime setting reaches. What does
//! change the arithmetic is BF16: with AVX512-BF16, ggml multiplies BF16
//! matrices with `vdpbf16ps`, two products per lane and instruction, and
//! the same long-text embedding runs ~40% faster. BF16 keeps F16's range
//! and 8 of its 11 significand bits; the vectors stay within cosine
//! 0.99997 of sentence-transformers' F32 ones (the F16 file: 0.999997),
//! so the file keeps its model id (vector space).
//!
//! Without those kernels BF16 is *slower* than F16 (ggml's generic path),
//! so the switch is taken only when the CPU backend ggml loaded at run
//! time has them (`llama/cpu_backend.rs`: ggml's `zen4`, `cooperlake` and
//! `sapphirerapids` variants, picked on CPUs with AVX512-BF16).
//!
//! ## How
//! F16 and BF16 are both two bytes per weight, so the GGUF layout does not
//! move: the copy is the file with each F16 tensor's type id set to BF16,
//! its data rounded to BF16 (round to nearest even, as ggml does), and
//! `general.file_type` set to "mostly BF16". Everything else (metadata,
//! F32 norms, biases, position embeddings, quantized tensors) is copied
//! byte for byte. The header is input-derived data: every count, length
//! and offset is checked against the file before use.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// ggml type ids (ggml.h).
const GGML_TYPE_F16: u32 = 1;
const GGML_TYPE_BF16: u32 = 30;
/// `llama_ftype` values for `general.file_type`.
const LLAMA_FTYPE_MOSTLY_F16: u32 = 1;
const LLAMA_FTYPE_MOSTLY_BF16: u32 = 32;
/// GGUF value type ids.
const GGUF_TYPE_UINT32: u32 = 4;
const GGUF_TYPE_STRING: u32 = 8;
const GGUF_TYPE_ARRAY: u32 = 9;
/// Defaults and sanity bounds.
const GGUF_DEFAULT_ALIGNMENT: u64 = 32;
const GGML_MAX_DIMS: u32 = 4;
const MAX_KEY_LEN: u64 = 64 * 1024;
const MAX_ENTRIES: u64 = 1 << 24;

/// What [`convert`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Converted {
    /// Tensors rewritten from F16 to BF16.
    pub tensors: usize,
    /// Their weights.
    pub weights: u64,
}

/// An F16 tensor found in the header.
struct F16Tensor {
    /// Where its type id sits in the file.
    type_pos: u64,
    /// Absolute byte range of its data.
    start: u64,
    len: u64,
}

/// The parts of a GGUF header the rewrite needs.
struct Header {
    file_type_pos: Option<u64>,
    f16: Vec<F16Tensor>,
    /// ggml type ids of the matrices (tensors of 2+ dimensions), sorted.
    matrix_types: Vec<u32>,
}

/// The ggml type ids of a GGUF's weight matrices (tensors of two or more
/// dimensions), sorted and without repeats: what the CPU kernels must be
/// able to multiply (`llama/kernels`).
pub(super) fn matrix_types(path: &Path) -> io::Result<Vec<u32>> {
    let mut input = File::open(path)?;
    let file_len = input.metadata()?.len();
    Ok(parse(&mut BufReader::new(&mut input), file_len)?.matrix_types)
}

/// Writes to `out` the BF16 copy of the GGUF at `src`. Returns `None`
/// (leaving `out` untouched) when the file has no F16 tensor.
pub(super) fn convert(src: &Path, out: &mut File) -> io::Result<Option<Converted>> {
    let mut input = File::open(src)?;
    let file_len = input.metadata()?.len();
    let header = parse(&mut BufReader::new(&mut input), file_len)?;
    if header.f16.is_empty() {
        return Ok(None);
    }
    input.seek(SeekFrom::Start(0))?;
    out.seek(SeekFrom::Start(0))?;
    out.set_len(0)?;
    io::copy(&mut input, out)?;
    for t in &header.f16 {
        out.seek(SeekFrom::Start(t.type_pos))?;
        out.write_all(&GGML_TYPE_BF16.to_le_bytes())?;
    }
    if let Some(pos) = header.file_type_pos {
        out.seek(SeekFrom::Start(pos))?;
        out.write_all(&LLAMA_FTYPE_MOSTLY_BF16.to_le_bytes())?;
    }
    let table = f16_to_bf16_table();
    let mut buf = vec![0u8; 1 << 20];
    let mut weights = 0;
    for t in &header.f16 {
        input.seek(SeekFrom::Start(t.start))?;
        out.seek(SeekFrom::Start(t.start))?;
        let mut left = t.len;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            let chunk = &mut buf[..n];
            input.read_exact(chunk)?;
            for pair in chunk.chunks_exact_mut(2) {
                let h = u16::from_le_bytes([pair[0], pair[1]]);
                pair.copy_from_slice(&table[h as usize].to_le_bytes());
            }
            out.write_all(chunk)?;
            left -= n as u64;
        }
        weights += t.len / 2;
    }
    out.flush()?;
    Ok(Some(Converted {
        tensors: header.f16.len(),
        weights,
    }))
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// A reader that knows its position, for recording where fields sit.
struct Cursor<R> {
    inner: R,
    pos: u64,
    len: u64,
}

impl<R: Read + Seek> Cursor<R> {
    fn bytes<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut b = [0u8; N];
        self.inner
            .read_exact(&mut b)
            .map_err(|_| invalid("GGUF header ends early"))?;
        self.pos += N as u64;
        Ok(b)
    }

    fn u32(&mut self) -> io::Result<u32> {
        self.bytes::<4>().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> io::Result<u64> {
        self.bytes::<8>().map(u64::from_le_bytes)
    }

    fn skip(&mut self, n: u64) -> io::Result<()> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.len)
            .ok_or_else(|| invalid("GGUF field runs past the end of the file"))?;
        let step = i64::try_from(n).map_err(|_| invalid("GGUF field too long"))?;
        self.inner.seek(SeekFrom::Current(step))?;
        self.pos = end;
        Ok(())
    }

    /// A string's bytes (bounded; used for keys and tensor names).
    fn string(&mut self) -> io::Result<Vec<u8>> {
        let n = self.u64()?;
        if n > MAX_KEY_LEN {
            return Err(invalid("GGUF key or name too long"));
        }
        let mut s = vec![0u8; n as usize];
        self.inner
            .read_exact(&mut s)
            .map_err(|_| invalid("GGUF header ends early"))?;
        self.pos += n;
        Ok(s)
    }

    /// Skips one value of GGUF type `ty`.
    fn skip_value(&mut self, ty: u32, depth: u32) -> io::Result<()> {
        match ty {
            GGUF_TYPE_STRING => {
                let n = self.u64()?;
                self.skip(n)
            }
            GGUF_TYPE_ARRAY if depth == 0 => {
                let elem = self.u32()?;
                let n = self.u64()?;
                if let Some(size) = scalar_size(elem) {
                    let bytes = n
                        .checked_mul(size)
                        .ok_or_else(|| invalid("GGUF array too long"))?;
                    self.skip(bytes)
                } else {
                    if n > self.len {
                        return Err(invalid("GGUF array too long"));
                    }
                    (0..n).try_for_each(|_| self.skip_value(elem, depth + 1))
                }
            }
            _ => match scalar_size(ty) {
                Some(size) => self.skip(size),
                None => Err(invalid(format!("unknown GGUF value type {ty}"))),
            },
        }
    }
}

/// Byte size of a fixed-size GGUF value type.
fn scalar_size(ty: u32) -> Option<u64> {
    match ty {
        0 | 1 | 7 => Some(1), // u8, i8, bool
        2 | 3 => Some(2),     // u16, i16
        4..=6 => Some(4),     // u32, i32, f32
        10..=12 => Some(8),   // u64, i64, f64
        _ => None,
    }
}

fn parse<R: Read + Seek>(reader: R, len: u64) -> io::Result<Header> {
    let mut c = Cursor {
        inner: reader,
        pos: 0,
        len,
    };
    if &c.bytes::<4>()? != b"GGUF" {
        return Err(invalid("not a GGUF file"));
    }
    let version = c.u32()?;
    if !(2..=3).contains(&version) {
        return Err(invalid(format!("unsupported GGUF version {version}")));
    }
    let n_tensors = c.u64()?;
    let n_kv = c.u64()?;
    if n_tensors > MAX_ENTRIES || n_kv > MAX_ENTRIES {
        return Err(invalid("implausible GGUF entry count"));
    }
    let mut alignment = GGUF_DEFAULT_ALIGNMENT;
    let mut file_type_pos = None;
    for _ in 0..n_kv {
        let key = c.string()?;
        let ty = c.u32()?;
        match (key.as_slice(), ty) {
            (b"general.alignment", GGUF_TYPE_UINT32) => {
                alignment = u64::from(c.u32()?);
                if alignment == 0 || !alignment.is_power_of_two() {
                    return Err(invalid("bad GGUF alignment"));
                }
            }
            (b"general.file_type", GGUF_TYPE_UINT32) => {
                let pos = c.pos;
                if c.u32()? == LLAMA_FTYPE_MOSTLY_F16 {
                    file_type_pos = Some(pos);
                }
            }
            _ => c.skip_value(ty, 0)?,
        }
    }
    // (type position, relative offset, byte length) of each F16 tensor.
    let mut found = Vec::new();
    let mut matrix_types = std::collections::BTreeSet::new();
    for _ in 0..n_tensors {
        c.string()?;
        let n_dims = c.u32()?;
        if n_dims == 0 || n_dims > GGML_MAX_DIMS {
            return Err(invalid("bad GGUF tensor rank"));
        }
        let mut elems: u64 = 1;
        for _ in 0..n_dims {
            elems = elems
                .checked_mul(c.u64()?)
                .ok_or_else(|| invalid("GGUF tensor too large"))?;
        }
        let type_pos = c.pos;
        let ty = c.u32()?;
        let offset = c.u64()?;
        if n_dims >= 2 {
            matrix_types.insert(ty);
        }
        if ty == GGML_TYPE_F16 {
            let bytes = elems
                .checked_mul(2)
                .ok_or_else(|| invalid("GGUF tensor too large"))?;
            found.push((type_pos, offset, bytes));
        }
    }
    let data_start = c.pos.div_ceil(alignment) * alignment;
    let file_len = c.len;
    let f16 = found
        .into_iter()
        .map(|(type_pos, offset, len)| {
            let start = data_start
                .checked_add(offset)
                .filter(|s| s.checked_add(len).is_some_and(|end| end <= file_len))
                .ok_or_else(|| invalid("GGUF tensor data runs past the end of the file"))?;
            Ok(F16Tensor {
                type_pos,
                start,
                len,
            })
        })
        .collect::<io::Result<Vec<_>>>()?;
    Ok(Header {
        file_type_pos,
        f16,
        matrix_types: matrix_types.into_iter().collect(),
    })
}

/// F16 bits → BF16 bits for every F16 value: exact F16 → F32, then F32 →
/// BF16 rounded to nearest even (ggml's `GGML_FP32_TO_BF16`); NaNs stay
/// quiet NaNs.
fn f16_to_bf16_table() -> Vec<u16> {
    (0..=u16::MAX)
        .map(|h| {
            let bits = f16_to_f32(h).to_bits();
            if (bits & 0x7fff_ffff) > 0x7f80_0000 {
                ((bits >> 16) | 64) as u16
            } else {
                ((bits + (0x7fff + ((bits >> 16) & 1))) >> 16) as u16
            }
        })
        .collect()
}

/// IEEE half → single, exact.
fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f32::from(h & 0x3ff);
    match exp {
        0 => sign * frac * 2f32.powi(-24),
        31 if frac == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        _ => sign * (1.0 + frac / 1024.0) * 2f32.powi(exp - 15),
    }
}

#[cfg(test)]
mod tests;
