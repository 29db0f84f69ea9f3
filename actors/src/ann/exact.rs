//! The exact nearest-neighbour scan over stored f32 vectors: the answer
//! the HNSW graph is measured against, and the path for stores too small
//! for the graph to pay off. A bounded min-heap keeps the top k; the dot
//! product uses AVX2+FMA when the CPU has it (the scan is memory-bound, so
//! the point is to keep up with the memory bus: `cargo bench --bench ann`
//! reports its share of the machine's bandwidth).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// The exact `k` nearest rows to `query` as `(id, cosine similarity)`, best
/// first (ties: lower id first). Used when the index is unavailable or the
/// store is small enough that a scan beats the graph.
///
/// Vectors are L2-normalized (the embedder's contract), so the similarity
/// is the dot product. Rows of another dimension are skipped (they belong
/// to no comparable space), as are NaN scores. One bounded min-heap of `k`
/// entries is the only allocation besides the result.
pub fn exact_search(query: &[f32], rows: &[(u64, Vec<f32>)], k: usize) -> Vec<(u64, f32)> {
    if k == 0 || query.is_empty() || rows.is_empty() {
        return Vec::new();
    }
    let mut top = TopK::new(k.min(rows.len()));
    scan(query, rows, &mut top);
    top.into_sorted()
}

#[cfg(target_arch = "x86_64")]
fn scan(query: &[f32], rows: &[(u64, Vec<f32>)], top: &mut TopK) {
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports the features `scan_avx2` is compiled for.
        unsafe { scan_avx2(query, rows, top) }
    } else {
        scan_with(query, rows, top, dot)
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn scan(query: &[f32], rows: &[(u64, Vec<f32>)], top: &mut TopK) {
    scan_with(query, rows, top, dot)
}

#[inline(always)]
fn scan_with(
    query: &[f32],
    rows: &[(u64, Vec<f32>)],
    top: &mut TopK,
    dot: impl Fn(&[f32], &[f32]) -> f32,
) {
    for (id, vector) in rows {
        if vector.len() == query.len() {
            top.offer(*id, dot(query, vector));
        }
    }
}

/// The scan with the AVX2/FMA dot product inlined into the loop.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn scan_avx2(query: &[f32], rows: &[(u64, Vec<f32>)], top: &mut TopK) {
    // SAFETY: this function only runs where AVX2 and FMA are available.
    scan_with(query, rows, top, |a, b| unsafe { dot_avx2(a, b) })
}

/// Dot product of the common prefix of `a` and `b`: four independent
/// 8-wide FMA accumulators (32 floats a step), then 8-wide steps, then a
/// scalar tail.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut i = 0;
    // SAFETY: every load reads 8 floats starting at `i`, with `i + 8 <= n`
    // (`i + 32 <= n` in the unrolled loop); unaligned loads are used.
    unsafe {
        let mut acc = [_mm256_setzero_ps(); 4];
        while i + 32 <= n {
            for (j, acc) in acc.iter_mut().enumerate() {
                let x = _mm256_loadu_ps(pa.add(i + 8 * j));
                let y = _mm256_loadu_ps(pb.add(i + 8 * j));
                *acc = _mm256_fmadd_ps(x, y, *acc);
            }
            i += 32;
        }
        while i + 8 <= n {
            acc[0] = _mm256_fmadd_ps(
                _mm256_loadu_ps(pa.add(i)),
                _mm256_loadu_ps(pb.add(i)),
                acc[0],
            );
            i += 8;
        }
        let sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
        let half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps::<1>(sum));
        let quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
        let one = _mm_add_ss(quarter, _mm_movehdup_ps(quarter));
        let mut total = _mm_cvtss_f32(one);
        while i < n {
            total += *pa.add(i) * *pb.add(i);
            i += 1;
        }
        total
    }
}

/// Lanes of independent partial sums, so the adds pipeline and LLVM can
/// vectorize without reassociating float additions.
const LANES: usize = 8;

/// Portable dot product of the common prefix of `a` and `b`.
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; LANES];
    let chunks_a = a.chunks_exact(LANES);
    let chunks_b = b.chunks_exact(LANES);
    let (tail_a, tail_b) = (chunks_a.remainder(), chunks_b.remainder());
    for (x, y) in chunks_a.zip(chunks_b) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    let mut total: f32 = acc.iter().sum();
    for (x, y) in tail_a.iter().zip(tail_b) {
        total += x * y;
    }
    total
}

/// A scored row; orders by score, then prefers the lower id.
#[derive(Debug, Clone, Copy)]
struct Scored {
    score: f32,
    id: u64,
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Scored {}

impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.id.cmp(&self.id))
    }
}

/// The best `k` scores seen: a min-heap whose root is the one to evict.
struct TopK {
    k: usize,
    heap: BinaryHeap<Reverse<Scored>>,
    /// The root's score once full; anything below it is rejected without
    /// touching the heap.
    floor: f32,
}

impl TopK {
    fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k),
            floor: f32::NEG_INFINITY,
        }
    }

    #[inline(always)]
    fn offer(&mut self, id: u64, score: f32) {
        if score.is_nan() || score < self.floor {
            return;
        }
        self.insert(Scored { score, id });
    }

    #[inline(never)]
    fn insert(&mut self, entry: Scored) {
        if self.heap.len() < self.k {
            self.heap.push(Reverse(entry));
        } else if let Some(mut root) = self.heap.peek_mut() {
            if entry > root.0 {
                *root = Reverse(entry);
            }
        }
        if self.heap.len() == self.k {
            if let Some(root) = self.heap.peek() {
                self.floor = root.0.score;
            }
        }
    }

    fn into_sorted(self) -> Vec<(u64, f32)> {
        // Ascending order of `Reverse` is descending order of scores.
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|Reverse(s)| (s.id, s.score))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / norm).collect()
    }

    #[test]
    fn dot_matches_a_naive_sum_for_every_tail_length() {
        for n in [1, 7, 31, 32, 33, 64, 100, 384, 385] {
            let a: Vec<f32> = (0..n).map(|i| ((i * 7 % 13) as f32 - 6.0) / 7.0).collect();
            let b: Vec<f32> = (0..n).map(|i| ((i * 5 % 11) as f32 - 5.0) / 5.0).collect();
            let naive: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(x * y)).sum();
            assert!((f64::from(dot(&a, &b)) - naive).abs() < 1e-4, "n = {n}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: the features were just detected.
                let fast = unsafe { dot_avx2(&a, &b) };
                assert!((f64::from(fast) - naive).abs() < 1e-4, "avx2, n = {n}");
            }
        }
    }

    #[test]
    fn exact_search_orders_best_first_and_breaks_ties_by_id() {
        let rows = vec![
            (10, unit(&[1.0, 0.0])),
            (11, unit(&[0.0, 1.0])),
            (12, unit(&[1.0, 1.0])),
            (9, unit(&[1.0, 0.0])),
            (13, vec![1.0, 0.0, 0.0]), // another space: skipped
            (14, vec![f32::NAN, 0.0]), // NaN score: skipped
        ];
        let q = unit(&[1.0, 0.0]);
        let got = exact_search(&q, &rows, 10);
        let ids: Vec<u64> = got.iter().map(|&(id, _)| id).collect();
        assert_eq!(ids, vec![9, 10, 12, 11]);
        assert!((got[0].1 - 1.0).abs() < 1e-6);
        assert!((got[2].1 - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert_eq!(
            exact_search(&q, &rows, 2),
            vec![(9, got[0].1), (10, got[1].1)]
        );
        assert!(exact_search(&q, &rows, 0).is_empty());
        assert!(exact_search(&q, &[], 3).is_empty());
        assert!(exact_search(&[], &rows, 3).is_empty());
    }

    #[test]
    fn top_k_keeps_the_best_of_a_stream() {
        let mut top = TopK::new(3);
        for (id, score) in [(1, 0.1), (2, 0.9), (3, 0.5), (4, 0.7), (5, 0.2), (6, 0.9)] {
            top.offer(id, score);
        }
        assert_eq!(top.into_sorted(), vec![(2, 0.9), (6, 0.9), (4, 0.7)]);
    }
}
