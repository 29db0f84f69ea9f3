//! The episodic vector index: usearch HNSW against the exact scan, on
//! clustered 384-d vectors (100 topics + noise, like sentence embeddings).
//!
//! Run with `cargo bench --bench ann` (about a minute and a half).
//!
//! Criterion measures, at 10,000 rows, one k=10 query through the graph
//! and through `exact_search`, the same pair at 500 … 5,000 rows for the
//! crossover, and a sequential f32 sum over 256 MiB as the memory-bandwidth
//! yardstick. A summary follows with per-query medians (p50) timed one call
//! at a time, recall@10 of the graph against the scan, the scan's
//! throughput as a share of that bandwidth (hot: vectors left in cache by
//! the previous query; cold: caches flushed first), and the smallest store
//! where the graph beats the scan.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use kirocrew_actors::ann::{build, exact_search, AnnIndex};

const DIM: usize = 384;
const K: usize = 10;
/// The store's graph candidate count (episodic search, up to 5 results).
const STORE_K: usize = 100;
const TOPICS: usize = 100;
/// Noise norm around a topic center (cosine to the center ≈ 0.7).
const SPREAD: f32 = 1.0;
const FULL: usize = 10_000;
const QUERIES: usize = 100;
/// Store sizes for the crossover (criterion).
const SIZES: &[usize] = &[500, 1_000, 2_000, 5_000, FULL];
/// Store sizes for the summary table (cheap, so finer).
const SUMMARY_SIZES: &[usize] = &[250, 500, 1_000, 1_500, 2_000, 3_000, 5_000, FULL];
/// The bandwidth yardstick's buffer.
const BANDWIDTH_BYTES: usize = 256 << 20;
/// Enough to evict the 32 MiB L3 (and then some) before a cold query.
const FLUSH_BYTES: usize = 64 << 20;

/// xorshift64*: the same data on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn uniform(&mut self) -> f32 {
        ((self.next() >> 40) as f32 + 0.5) / (1u64 << 24) as f32
    }

    fn normal(&mut self) -> f32 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    }
}

fn normalized(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn random_unit(rng: &mut Rng) -> Vec<f32> {
    normalized((0..DIM).map(|_| rng.normal()).collect())
}

fn around(rng: &mut Rng, centers: &[Vec<f32>]) -> Vec<f32> {
    let center = &centers[(rng.next() % centers.len() as u64) as usize];
    let scale = SPREAD / (DIM as f32).sqrt();
    normalized(center.iter().map(|c| c + scale * rng.normal()).collect())
}

struct Data {
    rows: Vec<(u64, Vec<f32>)>,
    queries: Vec<Vec<f32>>,
}

fn data() -> Data {
    let mut rng = Rng(0xA22_5EED);
    let centers: Vec<_> = (0..TOPICS).map(|_| random_unit(&mut rng)).collect();
    let rows = (0..FULL)
        .map(|i| (1_000 + 3 * i as u64, around(&mut rng, &centers)))
        .collect();
    let queries = (0..QUERIES).map(|_| around(&mut rng, &centers)).collect();
    Data { rows, queries }
}

fn index_of(rows: &[(u64, Vec<f32>)]) -> AnnIndex {
    build(DIM, rows.iter().cloned()).expect("build")
}

fn bench_10k(c: &mut Criterion, data: &Data, index: &AnnIndex) {
    let mut group = c.benchmark_group("ann_10k");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    let mut next = 0;
    group.bench_function("hnsw_k10", |b| {
        b.iter(|| {
            next = (next + 1) % QUERIES;
            black_box(index.search(black_box(&data.queries[next]), K))
        })
    });
    group.throughput(Throughput::Bytes((FULL * DIM * 4) as u64));
    group.bench_function("exact_k10", |b| {
        b.iter(|| {
            next = (next + 1) % QUERIES;
            black_box(exact_search(black_box(&data.queries[next]), &data.rows, K))
        })
    });
    group.finish();
}

fn bench_crossover(c: &mut Criterion, data: &Data, indexes: &[(usize, AnnIndex)]) {
    let mut group = c.benchmark_group("ann_crossover");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(30);
    let mut next = 0;
    for (n, index) in indexes
        .iter()
        .filter(|(n, _)| *n < FULL && SIZES.contains(n))
    {
        group.bench_with_input(BenchmarkId::new("hnsw_k10", n), index, |b, index| {
            b.iter(|| {
                next = (next + 1) % QUERIES;
                black_box(index.search(black_box(&data.queries[next]), K))
            })
        });
        let rows = &data.rows[..*n];
        group.bench_with_input(BenchmarkId::new("exact_k10", n), rows, |b, rows| {
            b.iter(|| {
                next = (next + 1) % QUERIES;
                black_box(exact_search(black_box(&data.queries[next]), rows, K))
            })
        });
    }
    group.finish();
}

/// Sum of a large buffer with independent lane accumulators, so the loop
/// is bound by memory, not by the latency of one float add chain.
#[inline(always)]
fn lane_sum(buf: &[f32]) -> f32 {
    let mut acc = [0.0f32; 32];
    for chunk in buf.chunks_exact(32) {
        for i in 0..32 {
            acc[i] += chunk[i];
        }
    }
    acc.iter().sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn lane_sum_avx2(buf: &[f32]) -> f32 {
    lane_sum(buf)
}

fn memory_sum(buf: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { lane_sum_avx2(buf) };
    }
    lane_sum(buf)
}

fn bench_bandwidth(c: &mut Criterion, buf: &[f32]) {
    let mut group = c.benchmark_group("memory");
    group
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10)
        .throughput(Throughput::Bytes(BANDWIDTH_BYTES as u64));
    group.bench_function("sequential_f32_sum_256MiB", |b| {
        b.iter(|| black_box(memory_sum(black_box(buf))))
    });
    group.finish();
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Median seconds of one call of `f(query)` over every query, `passes` times.
fn p50(queries: &[Vec<f32>], passes: usize, mut f: impl FnMut(&[f32])) -> f64 {
    let mut samples = Vec::with_capacity(queries.len() * passes);
    for _ in 0..passes {
        for q in queries {
            let start = Instant::now();
            f(q);
            samples.push(start.elapsed().as_secs_f64());
        }
    }
    median(samples)
}

fn summary(data: &Data, indexes: &[(usize, AnnIndex)], buf: &[f32], build_10k: Duration) {
    let gbs = |bytes: usize, secs: f64| bytes as f64 / secs / 1e9;

    let bandwidth = gbs(
        BANDWIDTH_BYTES,
        median(
            (0..7)
                .map(|_| {
                    let start = Instant::now();
                    black_box(memory_sum(black_box(buf)));
                    start.elapsed().as_secs_f64()
                })
                .collect(),
        ),
    );

    println!();
    println!("== ann summary: {DIM}-d, {TOPICS} topics, k = {K}, p50 of single queries ==");
    println!("memory bandwidth (sequential f32 sum, 256 MiB): {bandwidth:.1} GB/s");
    println!(
        "HNSW build of {FULL} rows: {:.2} s",
        build_10k.as_secs_f64()
    );
    println!();
    println!(
        "{:>7} {:>11} {:>11} {:>12} {:>10} {:>9}",
        "rows", "hnsw p50", "exact p50", "exact/hnsw", "exact GB/s", "% of bw"
    );
    let mut crossover = None;
    for (n, index) in indexes {
        let rows = &data.rows[..*n];
        let hnsw = p50(&data.queries, 3, |q| {
            black_box(index.search(q, K));
        });
        let exact = p50(&data.queries, 3, |q| {
            black_box(exact_search(q, rows, K));
        });
        let bytes = n * DIM * 4;
        println!(
            "{:>7} {:>9.1}µs {:>9.1}µs {:>11.1}x {:>10.1} {:>8.0}%",
            n,
            hnsw * 1e6,
            exact * 1e6,
            exact / hnsw,
            gbs(bytes, exact),
            100.0 * gbs(bytes, exact) / bandwidth
        );
        if crossover.is_none() && hnsw < exact {
            crossover = Some(*n);
        }
    }

    // The store asks the graph for 20 candidates per result, at least
    // STORE_K (the MMR pool), so its crossover is measured at that k too.
    println!();
    println!("k = {STORE_K} (the store's candidate count for 5 results):");
    let mut store_crossover = None;
    for (n, index) in indexes {
        let rows = &data.rows[..*n];
        let hnsw = p50(&data.queries, 3, |q| {
            black_box(index.search(q, STORE_K));
        });
        let exact = p50(&data.queries, 3, |q| {
            black_box(exact_search(q, rows, STORE_K));
        });
        println!(
            "{:>7} {:>9.1}µs {:>9.1}µs {:>11.1}x",
            n,
            hnsw * 1e6,
            exact * 1e6,
            exact / hnsw
        );
        if store_crossover.is_none() && hnsw < exact {
            store_crossover = Some(*n);
        }
    }
    match store_crossover {
        Some(n) => println!("crossover at k = {STORE_K}: HNSW is faster from {n} rows"),
        None => println!("crossover at k = {STORE_K}: the exact scan was faster at every size"),
    }

    // Cold scans at 10k: every query starts with the vectors evicted.
    let flush: Vec<u8> = vec![1; FLUSH_BYTES];
    let mut cold = Vec::with_capacity(QUERIES / 2);
    for q in data.queries.iter().take(QUERIES / 2) {
        black_box(
            flush
                .iter()
                .step_by(64)
                .fold(0u8, |a, &b| a.wrapping_add(b)),
        );
        let start = Instant::now();
        black_box(exact_search(q, &data.rows, K));
        cold.push(start.elapsed().as_secs_f64());
    }
    let cold = median(cold);
    let cold_gbs = gbs(FULL * DIM * 4, cold);

    let (_, full_index) = indexes.last().expect("the 10k index");
    let mut hits = 0;
    for q in &data.queries {
        let truth: Vec<u64> = exact_search(q, &data.rows, K).iter().map(|r| r.0).collect();
        hits += full_index
            .search(q, K)
            .iter()
            .filter(|r| truth.contains(&r.0))
            .count();
    }
    let recall = hits as f64 / (K * QUERIES) as f64;

    println!(
        "{FULL} rows, cold caches: exact p50 {:.1}µs = {cold_gbs:.1} GB/s = {:.0}% of bandwidth",
        cold * 1e6,
        100.0 * cold_gbs / bandwidth
    );
    println!("recall@{K} of HNSW vs exact at {FULL} rows, {QUERIES} queries: {recall:.4}");
    match crossover {
        Some(n) => println!("crossover: HNSW is faster than the exact scan from {n} rows"),
        None => println!("crossover: the exact scan was faster at every size measured"),
    }
}

fn main() {
    let data = data();
    let mut indexes = Vec::new();
    let mut build_10k = Duration::ZERO;
    for &n in SUMMARY_SIZES {
        let start = Instant::now();
        indexes.push((n, index_of(&data.rows[..n])));
        if n == FULL {
            build_10k = start.elapsed();
        }
    }
    let buf: Vec<f32> = (0..BANDWIDTH_BYTES / 4).map(|i| (i % 7) as f32).collect();

    let mut c = Criterion::default().configure_from_args();
    let (_, full_index) = indexes.last().expect("the 10k index");
    bench_10k(&mut c, &data, full_index);
    bench_crossover(&mut c, &data, &indexes);
    bench_bandwidth(&mut c, &buf);
    c.final_summary();

    summary(&data, &indexes, &buf, build_10k);
}
