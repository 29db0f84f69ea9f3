use std::path::Path;

use super::index::{distance_to_similarity, AnnError, AnnIndex, MIN_CAPACITY, SIDECAR_FORMAT};
use super::persist::{sidecar_path, IndexMeta, Sidecar};

fn unit(v: &[f32]) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / norm).collect()
}

#[test]
fn distance_converts_to_similarity() {
    assert_eq!(distance_to_similarity(0.0), 1.0);
    assert_eq!(distance_to_similarity(1.0), 0.0);
    assert_eq!(distance_to_similarity(2.0), -1.0);
    assert_eq!(distance_to_similarity(-1e-7), 1.0, "clamped");
    assert_eq!(distance_to_similarity(2.0 + 1e-6), -1.0, "clamped");
}

#[test]
fn meta_dimension_comes_from_the_signature() {
    let meta = IndexMeta::new("org/model-v1/384", 7);
    assert_eq!(meta.signature, "org/model-v1/384");
    assert_eq!(meta.dim(), Some(384));
    let bad = |s: &str| IndexMeta {
        signature: s.into(),
        count: 0,
    };
    assert_eq!(bad("model").dim(), None);
    assert_eq!(bad("model/x").dim(), None);
    assert_eq!(bad("model/0").dim(), None);
}

#[test]
fn sidecar_sits_beside_the_index() {
    assert_eq!(
        sidecar_path(Path::new("/data/memory.ann")),
        Path::new("/data/memory.ann.meta.json")
    );
    assert_eq!(
        sidecar_path(Path::new("memory.ann")),
        Path::new("memory.ann.meta.json")
    );
}

#[test]
fn sidecar_json_round_trips() {
    let sidecar = Sidecar {
        format: SIDECAR_FORMAT,
        signature: "m/3".into(),
        count: 2,
        dim: 3,
        index_bytes: 10,
        index_sha256: "00ff".into(),
    };
    let json = serde_json::to_vec(&sidecar).unwrap();
    assert_eq!(serde_json::from_slice::<Sidecar>(&json).unwrap(), sidecar);
}

#[test]
fn save_refuses_meta_that_does_not_describe_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.ann");
    let mut index = AnnIndex::new(3).unwrap();
    index.add(1, &unit(&[1.0, 0.0, 0.0])).unwrap();
    let wrong_dim = IndexMeta::new("m/4", 1);
    assert!(matches!(
        index.save(&path, &wrong_dim),
        Err(AnnError::Meta(_))
    ));
    let wrong_count = IndexMeta::new("m/3", 2);
    assert!(matches!(
        index.save(&path, &wrong_count),
        Err(AnnError::Meta(_))
    ));
    assert!(!path.exists() && !sidecar_path(&path).exists());
    let bad_expected = IndexMeta {
        signature: "m".into(),
        count: 1,
    };
    assert!(matches!(
        AnnIndex::load(&path, &bad_expected),
        Err(AnnError::Meta(_))
    ));
}

#[test]
fn zero_dimension_and_wrong_sizes_are_errors() {
    assert!(matches!(AnnIndex::new(0), Err(AnnError::ZeroDimension)));
    let mut index = AnnIndex::new(3).unwrap();
    assert!(matches!(
        index.add(1, &[1.0, 0.0]),
        Err(AnnError::DimensionMismatch {
            expected: 3,
            got: 2
        })
    ));
    index.add(1, &[1.0, 0.0, 0.0]).unwrap();
    assert!(index.search(&[1.0, 0.0], 5).is_empty());
    assert!(index.search(&[1.0, 0.0, 0.0], 0).is_empty());
    // usearch's f16 kernels differ per CPU: the self-match is 1 within
    // rounding, never compared for exact equality.
    let found = index.search(&[1.0, 0.0, 0.0], 5);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, 1);
    assert!((found[0].1 - 1.0).abs() < 1e-3, "{found:?}");
}

#[test]
fn growing_past_the_initial_capacity() {
    let mut index = AnnIndex::new(2).unwrap();
    for id in 0..(3 * MIN_CAPACITY as u64) {
        let angle = id as f32 * 0.01;
        index.add(id, &[angle.cos(), angle.sin()]).unwrap();
    }
    assert_eq!(index.len(), 3 * MIN_CAPACITY);
    assert_eq!(index.search(&[1.0, 0.0], 1)[0].0, 0);
}
