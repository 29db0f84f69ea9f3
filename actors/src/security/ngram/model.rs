//! The trained weights and their file format.
//!
//! File (little-endian): the magic `KCNGRAM2`, `u32` block bits, `f32`
//! bias, `u32` count, then `count` entries of (LEB128 gap to the previous
//! index + 1, `i16` weight in units of 1/1024), indices strictly
//! ascending. Weights under [`MIN_WEIGHT`] are not stored: most of the
//! buckets a training set reaches hold an n-gram seen once, whose weight
//! moves no score, and dropping them (with the gap coding) keeps the
//! compiled-in file a tenth of its dense size.

use thiserror::Error;

use super::features::{Features, BLOCK_BITS, DIMS};

const MAGIC: &[u8; 8] = b"KCNGRAM2";

/// Weight resolution of the stored file.
const STEP: f32 = 1.0 / 1024.0;

/// Smallest weight magnitude stored.
pub const MIN_WEIGHT: f32 = 0.02;

/// Why a model file was refused.
#[derive(Debug, Error, PartialEq)]
pub enum ModelError {
    /// Not a model file, or a truncated one.
    #[error("not an n-gram model file ({0})")]
    Format(&'static str),
    /// Trained with another hashing width than this build uses.
    #[error("model hashed into 2^{found} buckets per block, this build uses 2^{BLOCK_BITS}")]
    BlockBits {
        /// The file's value.
        found: u32,
    },
}

/// A logistic-regression model over [`Features`].
#[derive(Debug, Clone, PartialEq)]
pub struct NgramModel {
    /// Dense weights, `DIMS` of them.
    pub weights: Vec<f32>,
    /// The intercept.
    pub bias: f32,
}

impl NgramModel {
    /// The probability that `f` is an attack.
    pub fn score(&self, f: &Features) -> f32 {
        sigmoid(self.bias + f.dot(&self.weights))
    }

    /// The file bytes (weights rounded to the stored resolution, those
    /// under [`MIN_WEIGHT`] dropped).
    pub fn to_bytes(&self) -> Vec<u8> {
        let kept: Vec<(u32, i16)> = self
            .weights
            .iter()
            .enumerate()
            .filter(|(_, w)| w.abs() >= MIN_WEIGHT)
            .map(|(i, &w)| (i as u32, quantize(w)))
            .collect();
        let mut out = Vec::with_capacity(20 + kept.len() * 3);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&BLOCK_BITS.to_le_bytes());
        out.extend_from_slice(&self.bias.to_le_bytes());
        out.extend_from_slice(&(kept.len() as u32).to_le_bytes());
        let mut next = 0u32;
        for (i, w) in kept {
            push_leb128(&mut out, i - next);
            out.extend_from_slice(&w.to_le_bytes());
            next = i + 1;
        }
        out
    }

    /// Reads a model file, checking everything a corrupt file could break.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ModelError> {
        let rest = bytes
            .strip_prefix(MAGIC)
            .ok_or(ModelError::Format("magic"))?;
        let word = |at: usize| -> Result<[u8; 4], ModelError> {
            rest.get(at..at + 4)
                .and_then(|c| c.try_into().ok())
                .ok_or(ModelError::Format("truncated"))
        };
        let bits = u32::from_le_bytes(word(0)?);
        if bits != BLOCK_BITS {
            return Err(ModelError::BlockBits { found: bits });
        }
        let bias = f32::from_le_bytes(word(4)?);
        if !bias.is_finite() {
            return Err(ModelError::Format("bias"));
        }
        let count = u32::from_le_bytes(word(8)?) as usize;
        let mut body = &rest[12..];
        let mut weights = vec![0.0; DIMS];
        let mut next = 0usize;
        for _ in 0..count {
            let gap = read_leb128(&mut body).ok_or(ModelError::Format("entry"))?;
            let (w, tail) = body
                .split_first_chunk::<2>()
                .ok_or(ModelError::Format("entry"))?;
            body = tail;
            let i = next
                .checked_add(gap as usize)
                .filter(|&i| i < DIMS)
                .ok_or(ModelError::Format("entry"))?;
            weights[i] = f32::from(i16::from_le_bytes(*w)) * STEP;
            next = i + 1;
        }
        if !body.is_empty() {
            return Err(ModelError::Format("length"));
        }
        Ok(Self { weights, bias })
    }
}

fn quantize(w: f32) -> i16 {
    // Trained weights stay far inside ±32; a wild one saturates.
    (w / STEP)
        .round()
        .clamp(f32::from(i16::MIN), f32::from(i16::MAX)) as i16
}

fn push_leb128(out: &mut Vec<u8>, mut v: u32) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn read_leb128(body: &mut &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let (&byte, rest) = body.split_first()?;
        *body = rest;
        v |= u32::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The logistic function.
pub fn sigmoid(z: f32) -> f32 {
    1.0 / (1.0 + (-z).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> NgramModel {
        let mut weights = vec![0.0; DIMS];
        weights[3] = 0.5;
        weights[200] = -0.25;
        weights[DIMS - 1] = -1.25;
        weights[7] = 0.01; // under MIN_WEIGHT: dropped
        NgramModel {
            weights,
            bias: -0.75,
        }
    }

    #[test]
    fn round_trips_and_drops_the_smallest_weights() {
        let bytes = sample().to_bytes();
        let back = NgramModel::from_bytes(&bytes).unwrap();
        let close = |got: f32, want: f32| assert!((got - want).abs() < 1e-6, "{got} != {want}");
        close(back.bias, -0.75);
        close(back.weights[3], 0.5);
        close(back.weights[200], -0.25);
        close(back.weights[DIMS - 1], -1.25);
        close(back.weights[7], 0.0);
        let stored = back.weights.iter().filter(|w| w.abs() > 1e-6).count();
        assert_eq!(stored, 3);
        // Gaps: 3 and 196 (two bytes), then one of three bytes.
        assert_eq!(bytes.len(), 20 + (1 + 2) + (2 + 2) + (3 + 2));
    }

    #[test]
    fn leb128_round_trips_its_edges() {
        for v in [0, 1, 127, 128, 16_383, 16_384, u32::MAX] {
            let mut buf = Vec::new();
            push_leb128(&mut buf, v);
            let mut slice = buf.as_slice();
            assert_eq!(read_leb128(&mut slice), Some(v));
            assert!(slice.is_empty());
        }
        let mut endless: &[u8] = &[0x80; 8];
        assert_eq!(read_leb128(&mut endless), None);
    }

    #[test]
    fn corrupt_files_are_refused() {
        let good = sample().to_bytes();
        assert_eq!(
            NgramModel::from_bytes(b"KCNGRAM0xxxxxxxxxxxx"),
            Err(ModelError::Format("magic"))
        );
        assert_eq!(
            NgramModel::from_bytes(&good[..good.len() - 1]),
            Err(ModelError::Format("entry"))
        );
        assert_eq!(
            NgramModel::from_bytes(&good[..14]),
            Err(ModelError::Format("truncated"))
        );
        let mut longer = good.clone();
        longer.push(0);
        assert_eq!(
            NgramModel::from_bytes(&longer),
            Err(ModelError::Format("length"))
        );
        let mut bits = good.clone();
        bits[8..12].copy_from_slice(&12u32.to_le_bytes());
        assert_eq!(
            NgramModel::from_bytes(&bits),
            Err(ModelError::BlockBits { found: 12 })
        );
        let mut far = good.clone();
        // The last gap made to point past the end.
        let last = far.len() - 5;
        far[last..last + 3].copy_from_slice(&[0xff, 0xff, 0x7f]);
        assert_eq!(
            NgramModel::from_bytes(&far),
            Err(ModelError::Format("entry"))
        );
        let mut nan = good;
        nan[12..16].copy_from_slice(&f32::NAN.to_le_bytes());
        assert_eq!(
            NgramModel::from_bytes(&nan),
            Err(ModelError::Format("bias"))
        );
    }

    #[test]
    fn score_is_the_logistic_of_bias_plus_dot() {
        let m = sample();
        let f = Features {
            idx: vec![3],
            val: vec![1.0],
            words: 1,
        };
        assert!((m.score(&f) - sigmoid(-0.25)).abs() < 1e-6);
        assert!((sigmoid(0.0) - 0.5).abs() < 1e-7);
    }
}
