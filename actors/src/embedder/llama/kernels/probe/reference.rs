//! The probe's reference side: fixed pseudo-random inputs, the exact
//! product in f64, and the tolerance a kernel's result must meet (pure).

/// Least cosine between computed and reference outputs (activations are
/// quantized too, which costs well under 1%).
const MIN_COSINE: f64 = 0.99;

/// Deterministic values in [-1, 1) (a 64-bit LCG; `seed` picks a stream).
pub(super) fn pseudo_random(len: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// `x` (rows of `k`) times the transposed `w` (rows of `k`), in f64:
/// row-major rows of `w`'s row count, ggml's layout of `mul_mat(w, x)`.
pub(super) fn matmul(w: &[f32], x: &[f32], k: usize) -> Vec<f64> {
    x.chunks_exact(k)
        .flat_map(|row| {
            w.chunks_exact(k).map(move |wrow| {
                wrow.iter()
                    .zip(row)
                    .map(|(a, b)| f64::from(*a) * f64::from(*b))
                    .sum::<f64>()
            })
        })
        .collect()
}

/// Whether `got` is `want` up to the activations' quantization: finite,
/// same direction (cosine) and about the same length.
pub(super) fn compare(got: &[f32], want: &[f64]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} values, expected {}", got.len(), want.len()));
    }
    if got.iter().any(|v| !v.is_finite()) {
        return Err("non-finite results".into());
    }
    let dot: f64 = got.iter().zip(want).map(|(g, w)| f64::from(*g) * w).sum();
    let got_norm = got
        .iter()
        .map(|g| f64::from(*g).powi(2))
        .sum::<f64>()
        .sqrt();
    let want_norm = want.iter().map(|w| w * w).sum::<f64>().sqrt();
    if got_norm == 0.0 || want_norm == 0.0 {
        return Err("all-zero results".into());
    }
    let cosine = dot / (got_norm * want_norm);
    let ratio = got_norm / want_norm;
    if cosine < MIN_COSINE || !(0.9..=1.1).contains(&ratio) {
        return Err(format!("cosine {cosine:.4}, norm ratio {ratio:.3}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_layout_is_rows_of_outputs() {
        // w: 64 rows of 256; x: 1 row of 256 ones -> each output is a row sum.
        let (n, k) = (64usize, 256usize);
        let w: Vec<f32> = (0..n * k).map(|i| (i / k) as f32).collect();
        let x = vec![1f32; k];
        let y = matmul(&w, &x, k);
        assert_eq!(y.len(), n);
        assert!((y[3] - 3.0 * k as f64).abs() < 1e-9);
    }

    #[test]
    fn comparison_accepts_small_noise_and_rejects_garbage() {
        let want: Vec<f64> = (0..64).map(|i| f64::from(i) - 31.5).collect();
        let noisy: Vec<f32> = want.iter().map(|w| (*w * 1.004 + 0.01) as f32).collect();
        assert!(compare(&noisy, &want).is_ok());
        let zeros = vec![0f32; 64];
        assert!(compare(&zeros, &want).is_err());
        let reversed: Vec<f32> = want.iter().rev().map(|w| *w as f32).collect();
        assert!(compare(&reversed, &want).is_err());
        let doubled: Vec<f32> = want.iter().map(|w| (*w * 2.0) as f32).collect();
        assert!(compare(&doubled, &want).is_err());
        let mut nan = noisy.clone();
        nan[3] = f32::NAN;
        assert!(compare(&nan, &want).is_err());
    }

    #[test]
    fn pseudo_random_values_spread_over_the_range() {
        let a = pseudo_random(1000, 7);
        assert!(a.iter().all(|v| (-1.0..1.0).contains(v)));
        let mean = a.iter().map(|v| f64::from(*v)).sum::<f64>() / 1000.0;
        assert!(mean.abs() < 0.1, "{mean}");
        let b = pseudo_random(1000, 8);
        let apart: f32 = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).sum();
        assert!(apart > 100.0, "seeds give different streams: {apart}");
    }
}
