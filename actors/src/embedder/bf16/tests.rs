use super::*;

fn gguf_string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

/// A small GGUF: metadata (a string, an array of strings, file_type,
/// alignment 64), an F32 tensor and an F16 tensor.
fn sample(f16_values: &[u16]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(b"GGUF");
    b.extend(3u32.to_le_bytes());
    b.extend(2u64.to_le_bytes()); // tensors
    b.extend(4u64.to_le_bytes()); // kv
    gguf_string(&mut b, "general.name");
    b.extend(GGUF_TYPE_STRING.to_le_bytes());
    gguf_string(&mut b, "tiny");
    gguf_string(&mut b, "tokenizer.ggml.tokens");
    b.extend(GGUF_TYPE_ARRAY.to_le_bytes());
    b.extend(GGUF_TYPE_STRING.to_le_bytes());
    b.extend(2u64.to_le_bytes());
    gguf_string(&mut b, "[CLS]");
    gguf_string(&mut b, "[SEP]");
    gguf_string(&mut b, "general.file_type");
    b.extend(GGUF_TYPE_UINT32.to_le_bytes());
    b.extend(LLAMA_FTYPE_MOSTLY_F16.to_le_bytes());
    gguf_string(&mut b, "general.alignment");
    b.extend(GGUF_TYPE_UINT32.to_le_bytes());
    b.extend(64u32.to_le_bytes());
    gguf_string(&mut b, "norm.weight");
    b.extend(1u32.to_le_bytes());
    b.extend(2u64.to_le_bytes());
    b.extend(0u32.to_le_bytes()); // F32
    b.extend(0u64.to_le_bytes());
    gguf_string(&mut b, "w.weight");
    b.extend(2u32.to_le_bytes());
    b.extend(2u64.to_le_bytes());
    b.extend(((f16_values.len() / 2) as u64).to_le_bytes());
    b.extend(GGML_TYPE_F16.to_le_bytes());
    b.extend(64u64.to_le_bytes());
    while b.len() % 64 != 0 {
        b.push(0);
    }
    b.extend(1.5f32.to_le_bytes());
    b.extend((-2.0f32).to_le_bytes());
    b.resize(b.len() + 56, 0);
    for v in f16_values {
        b.extend(v.to_le_bytes());
    }
    b
}

fn convert_bytes(input: &[u8]) -> io::Result<(Option<Converted>, Vec<u8>)> {
    let dir = tempfile::tempdir()?;
    let src = dir.path().join("in.gguf");
    std::fs::write(&src, input)?;
    let mut out = tempfile::tempfile()?;
    let done = convert(&src, &mut out)?;
    let mut bytes = Vec::new();
    out.seek(SeekFrom::Start(0))?;
    out.read_to_end(&mut bytes)?;
    Ok((done, bytes))
}

#[test]
fn rewrites_only_f16_tensors_in_place() {
    // 1.0, -2.0, 0.1 (rounds), 65504 (max half), +inf, a NaN.
    let halves = [0x3c00, 0xc000, 0x2e66, 0x7bff, 0x7c00, 0x7e01];
    let input = sample(&halves);
    let (done, out) = convert_bytes(&input).unwrap();
    assert_eq!(
        done,
        Some(Converted {
            tensors: 1,
            weights: 6
        })
    );
    assert_eq!(out.len(), input.len(), "layout does not move");
    let data = input.len() - 12;
    let got: Vec<u16> = out[data..]
        .chunks_exact(2)
        .map(|p| u16::from_le_bytes([p[0], p[1]]))
        .collect();
    // 0.1 as half is 0.0999755859375 = 0x3DCCC000 in f32 → 0x3DCD.
    assert_eq!(&got[..5], &[0x3f80, 0xc000, 0x3dcd, 0x4780, 0x7f80]);
    let nan = f32::from_bits(u32::from(got[5]) << 16);
    assert!(nan.is_nan());
    // The F32 tensor and metadata are byte-identical, except the
    // F16 type id and file_type.
    let diff: Vec<usize> = (0..data).filter(|&i| input[i] != out[i]).collect();
    assert_eq!(diff.len(), 2, "{diff:?}");
    let bf16 = parse(std::io::Cursor::new(&out), out.len() as u64).unwrap();
    assert!(bf16.f16.is_empty() && bf16.file_type_pos.is_none());
}

#[test]
fn nothing_to_do_without_f16_tensors() {
    let mut input = sample(&[0x3c00, 0x3c00]);
    // Turn the F16 tensor into BF16: nothing left to convert.
    let pos = input
        .windows(8)
        .position(|w| w == b"w.weight")
        .expect("tensor name")
        + 8
        + 4
        + 16;
    input[pos..pos + 4].copy_from_slice(&GGML_TYPE_BF16.to_le_bytes());
    assert_eq!(convert_bytes(&input).unwrap().0, None);
}

#[test]
fn rejects_malformed_headers() {
    let good = sample(&[0x3c00, 0x3c00]);
    assert!(convert_bytes(b"GGML not gguf").is_err());
    assert!(convert_bytes(&good[..40]).is_err(), "truncated header");
    let truncated_data = &good[..good.len() - 2];
    assert!(convert_bytes(truncated_data).is_err(), "data past the end");
    let mut huge = good.clone();
    huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(convert_bytes(&huge).is_err(), "tensor count");
}

#[test]
fn half_to_single_is_exact() {
    assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
    assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
    assert_eq!(f16_to_f32(0xfbff), -65504.0);
    assert_eq!(f16_to_f32(0x8000).to_bits(), (-0.0f32).to_bits());
}

#[test]
fn matrix_types_skip_vectors() {
    // The sample has a 1-D F32 norm and a 2-D F16 matrix.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    std::fs::write(&path, sample(&[0x3c00, 0x3c00])).unwrap();
    assert_eq!(matrix_types(&path).unwrap(), [GGML_TYPE_F16]);
    std::fs::write(&path, b"GGML not gguf").unwrap();
    assert!(matrix_types(&path).is_err());
}
