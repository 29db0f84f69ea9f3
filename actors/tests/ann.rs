//! The episodic vector index (`ann`): keyed by row id,
//! tombstones, replacement, persistence with its sidecar, and recall of the
//! HNSW graph against the exact scan on clustered 384-d data.

use std::fs;
use std::path::{Path, PathBuf};

use kirocrew_actors::ann::{build, exact_search, sidecar_path, AnnIndex, IndexMeta};

const DIM: usize = 384;
const MODEL: &str = "test/minilm";

/// xorshift64*: deterministic data on every run and platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in (0, 1).
    fn uniform(&mut self) -> f32 {
        ((self.next() >> 40) as f32 + 0.5) / (1u64 << 24) as f32
    }

    /// Standard normal (Box-Muller).
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

/// Noise norm around a topic center: a point's cosine to its center is
/// about 0.7 and two points of one topic about 0.5, like sentence
/// embeddings of one subject.
const SPREAD: f32 = 1.0;

/// A point of a random topic: center + isotropic noise of norm about
/// `spread`, normalized.
fn around(rng: &mut Rng, centers: &[Vec<f32>], spread: f32) -> Vec<f32> {
    let center = &centers[(rng.next() % centers.len() as u64) as usize];
    let scale = spread / (DIM as f32).sqrt();
    normalized(center.iter().map(|c| c + scale * rng.normal()).collect())
}

/// Row ids as SQLite hands them out after deletions: sparse, not 0-based.
fn row_id(i: usize) -> u64 {
    1_000 + 3 * i as u64
}

fn random_rows(rng: &mut Rng, n: usize) -> Vec<(u64, Vec<f32>)> {
    (0..n).map(|i| (row_id(i), random_unit(rng))).collect()
}

fn clustered_rows(rng: &mut Rng, n: usize, centers: &[Vec<f32>]) -> Vec<(u64, Vec<f32>)> {
    (0..n)
        .map(|i| (row_id(i), around(rng, centers, SPREAD)))
        .collect()
}

fn ids(results: &[(u64, f32)]) -> Vec<u64> {
    results.iter().map(|&(id, _)| id).collect()
}

fn meta(count: usize) -> IndexMeta {
    IndexMeta::new(format!("{MODEL}/{DIM}"), count as u64)
}

fn saved(dir: &Path, index: &AnnIndex) -> PathBuf {
    let path = dir.join("memory.ann");
    index.save(&path, &meta(index.len())).unwrap();
    path
}

#[test]
fn a_stored_vector_finds_itself_first() {
    let mut rng = Rng(0x5EED_0001);
    let rows = random_rows(&mut rng, 1_000);
    let index = build(DIM, rows.clone()).unwrap();
    assert_eq!(index.len(), 1_000);
    assert_eq!(index.dim(), DIM);
    for (id, vector) in rows.iter().step_by(97) {
        let found = index.search(vector, 5);
        assert_eq!(found.len(), 5);
        assert_eq!(found[0].0, *id);
        assert!((found[0].1 - 1.0).abs() < 1e-4, "{}", found[0].1);
        assert!(found.windows(2).all(|w| w[0].1 >= w[1].1), "best first");
        assert_eq!(ids(&exact_search(vector, &rows, 1)), vec![*id]);
    }
}

#[test]
fn k_beyond_the_store_returns_everything() {
    let mut rng = Rng(0x5EED_0002);
    let rows = random_rows(&mut rng, 7);
    let index = build(DIM, rows.clone()).unwrap();
    let found = index.search(&rows[0].1, 100);
    assert_eq!(found.len(), 7);
    let exact = exact_search(&rows[0].1, &rows, 100);
    assert_eq!(ids(&found), ids(&exact));
    for ((_, approx), (_, exact)) in found.iter().zip(&exact) {
        assert!((approx - exact).abs() < 1e-4, "{approx} vs {exact}");
    }
    assert!(AnnIndex::new(DIM)
        .unwrap()
        .search(&rows[0].1, 10)
        .is_empty());
}

#[test]
fn a_removed_row_disappears_from_results() {
    let mut rng = Rng(0x5EED_0003);
    let rows = random_rows(&mut rng, 500);
    let mut index = build(DIM, rows.clone()).unwrap();
    let (gone, vector) = rows[123].clone();

    assert!(index.contains(gone));
    assert!(index.remove(gone).unwrap());
    assert!(!index.contains(gone));
    assert!(!index.remove(gone).unwrap(), "already gone");
    assert_eq!(index.len(), 499);
    let found = index.search(&vector, 499);
    assert_eq!(found.len(), 499);
    assert!(!ids(&found).contains(&gone));

    // The freed slot is reused when the row comes back.
    index.add(gone, &vector).unwrap();
    assert_eq!(index.len(), 500);
    assert_eq!(index.search(&vector, 1)[0].0, gone);
}

#[test]
fn adding_an_existing_id_replaces_its_vector() {
    let mut rng = Rng(0x5EED_0004);
    let rows = random_rows(&mut rng, 300);
    let mut index = build(DIM, rows.clone()).unwrap();
    let (id, old) = rows[42].clone();
    let new = random_unit(&mut rng);

    index.add(id, &new).unwrap();
    assert_eq!(index.len(), 300, "replaced, not duplicated");
    let top = index.search(&new, 1);
    assert_eq!(top[0].0, id);
    assert!((top[0].1 - 1.0).abs() < 1e-4);
    let by_old = index.search(&old, 300);
    assert_ne!(by_old[0].0, id, "the old vector is gone");
    let score = by_old.iter().find(|&&(i, _)| i == id).unwrap().1;
    let expected: f32 = old.iter().zip(&new).map(|(a, b)| a * b).sum();
    assert!((score - expected).abs() < 1e-4, "{score} vs {expected}");

    // `build` keeps the last vector of a repeated id.
    let rebuilt = build(DIM, [(7, old.clone()), (8, new.clone()), (7, new.clone())]).unwrap();
    assert_eq!(rebuilt.len(), 2);
    assert!((rebuilt.search(&old, 2)[0].1 - expected).abs() < 1e-4);
}

#[test]
fn save_and_load_give_identical_results() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5EED_0005);
    let centers: Vec<_> = (0..20).map(|_| random_unit(&mut rng)).collect();
    let rows = clustered_rows(&mut rng, 2_000, &centers);
    let mut index = build(DIM, rows.clone()).unwrap();
    for (id, _) in rows.iter().step_by(10) {
        index.remove(*id).unwrap(); // tombstones survive the round trip
    }
    let path = saved(dir.path(), &index);
    assert!(sidecar_path(&path).exists());
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let mut loaded = AnnIndex::load(&path, &meta(1_800)).unwrap().expect("loads");
    assert_eq!(loaded.len(), 1_800);
    assert_eq!(loaded.dim(), DIM);
    assert!(!loaded.contains(rows[0].0));
    assert!(loaded.contains(rows[1].0));
    let queries: Vec<_> = (0..25)
        .map(|_| around(&mut rng, &centers, SPREAD))
        .collect();
    for q in &queries {
        assert_eq!(index.search(q, 10), loaded.search(q, 10));
    }

    // A loaded index keeps growing.
    for i in 0..200 {
        loaded
            .add(row_id(10_000 + i), &around(&mut rng, &centers, SPREAD))
            .unwrap();
    }
    assert_eq!(loaded.len(), 2_000);
    // Saving again replaces both files.
    let again = saved(dir.path(), &loaded);
    assert!(AnnIndex::load(&again, &meta(1_800)).unwrap().is_none());
    assert_eq!(
        AnnIndex::load(&again, &meta(2_000)).unwrap().unwrap().len(),
        2_000
    );
}

#[test]
fn load_refuses_another_space_or_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5EED_0006);
    let index = build(DIM, random_rows(&mut rng, 100)).unwrap();
    let path = saved(dir.path(), &index);

    assert!(AnnIndex::load(&path, &meta(100)).unwrap().is_some());
    let other_model = IndexMeta::new(format!("test/other/{DIM}"), 100);
    assert!(AnnIndex::load(&path, &other_model).unwrap().is_none());
    let other_dim = IndexMeta::new(format!("{MODEL}/768"), 100);
    assert!(AnnIndex::load(&path, &other_dim).unwrap().is_none());
    assert!(AnnIndex::load(&path, &meta(99)).unwrap().is_none());
    assert!(AnnIndex::load(&path, &meta(101)).unwrap().is_none());
}

#[test]
fn missing_files_load_as_none() {
    let dir = tempfile::tempdir().unwrap();
    let nothing = dir.path().join("memory.ann");
    assert!(AnnIndex::load(&nothing, &meta(0)).unwrap().is_none());

    let mut rng = Rng(0x5EED_0007);
    let index = build(DIM, random_rows(&mut rng, 50)).unwrap();

    let path = saved(dir.path(), &index);
    fs::remove_file(sidecar_path(&path)).unwrap();
    assert!(
        AnnIndex::load(&path, &meta(50)).unwrap().is_none(),
        "no sidecar"
    );

    let path = saved(dir.path(), &index);
    fs::remove_file(&path).unwrap();
    assert!(
        AnnIndex::load(&path, &meta(50)).unwrap().is_none(),
        "no index"
    );
}

#[test]
fn corrupt_files_load_as_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5EED_0008);
    let index = build(DIM, random_rows(&mut rng, 200)).unwrap();
    let path = saved(dir.path(), &index);
    let good = fs::read(&path).unwrap();
    let expect = meta(200);

    // A flipped byte in the matrix size, a vector, the index header (after
    // the 8-byte size and 200 f16 vectors), and the graph.
    let head = 8 + 200 * DIM * 2; // f16 vectors
    for at in [2, 8 + 1_000, head + 10, good.len() - 16] {
        let mut bad = good.clone();
        bad[at] ^= 0x5A;
        fs::write(&path, &bad).unwrap();
        assert!(
            AnnIndex::load(&path, &expect).unwrap().is_none(),
            "byte {at}"
        );
    }
    // Truncated, empty, and garbage of the right length.
    fs::write(&path, &good[..good.len() / 2]).unwrap();
    assert!(AnnIndex::load(&path, &expect).unwrap().is_none());
    fs::write(&path, b"").unwrap();
    assert!(AnnIndex::load(&path, &expect).unwrap().is_none());
    let garbage: Vec<u8> = (0..good.len()).map(|_| rng.next() as u8).collect();
    fs::write(&path, &garbage).unwrap();
    assert!(AnnIndex::load(&path, &expect).unwrap().is_none());

    // A sound index with a sidecar that is not JSON.
    fs::write(&path, &good).unwrap();
    assert!(AnnIndex::load(&path, &expect).unwrap().is_some());
    fs::write(sidecar_path(&path), b"{\"format\": 1, \"signa").unwrap();
    assert!(AnnIndex::load(&path, &expect).unwrap().is_none());
}

/// recall@10 of the graph against the exact scan at the bench's scale:
/// 10,000 vectors around 100 topics, 100 fresh queries from those topics.
#[test]
fn hnsw_recall_at_10_is_at_least_95_percent() {
    let mut rng = Rng(0x5EED_0009);
    let centers: Vec<_> = (0..100).map(|_| random_unit(&mut rng)).collect();
    let rows = clustered_rows(&mut rng, 10_000, &centers);
    let index = build(DIM, rows.clone()).unwrap();
    let queries: Vec<_> = (0..100)
        .map(|_| around(&mut rng, &centers, SPREAD))
        .collect();

    let mut hits = 0;
    for q in &queries {
        let truth = ids(&exact_search(q, &rows, 10));
        let approx = ids(&index.search(q, 10));
        assert_eq!(approx.len(), 10);
        hits += approx.iter().filter(|id| truth.contains(id)).count();
    }
    let recall = hits as f64 / (10 * queries.len()) as f64;
    eprintln!("recall@10 = {recall:.4}");
    assert!(recall >= 0.95, "recall@10 = {recall:.4}");
}

/// More threads searching at once than the machine has cores: usearch
/// serves each search from a per-thread slot, and a search that finds none
/// free fails, so the index must keep enough slots, also after a load.
#[test]
fn concurrent_searches_all_get_answers() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5EED_000A);
    let rows = random_rows(&mut rng, 2_000);
    let built = build(DIM, rows.clone()).unwrap();
    let path = saved(dir.path(), &built);
    let loaded = AnnIndex::load(&path, &meta(2_000)).unwrap().unwrap();
    for index in [&built, &loaded] {
        std::thread::scope(|s| {
            for t in 0..8 {
                let rows = &rows;
                s.spawn(move || {
                    for (id, vector) in rows.iter().skip(t).step_by(8).take(100) {
                        assert_eq!(index.search(vector, 10).first().map(|r| r.0), Some(*id));
                    }
                });
            }
        });
    }
}
