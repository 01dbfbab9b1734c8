//! The check every whisper model passes before whisper.cpp loads it, and the constants of the
//! GGML file format that the set-up-time converter (`whisper_ggml.rs`) writes and this check reads.
//!
//! A GGML whisper file is: magic, eleven i32 hparams (the last one the file type), the mel
//! filterbank (`i32 n_mel, i32 n_fft`, then f32s), the vocabulary (`i32 n`, then per entry
//! `i32 len` and bytes), then per tensor `i32 n_dims, i32 name_len, i32 ftype, i32 dims`, name,
//! data.

use std::path::Path;

use crate::error::{Error, Result};

/// The first four bytes of a GGML file (`lmgg` on disk).
pub const GGML_MAGIC: u32 = 0x6767_6d6c;
/// A tensor (or file) type: 32-bit floats.
pub const GGML_F32: i32 = 0;
/// A tensor (or file) type: 16-bit floats.
pub const GGML_F16: i32 = 1;
/// A tensor type: whisper.cpp's `q8_0`, blocks of [`Q8_0_BLOCK`] values as an f16 scale and
/// that many int8 ([`Q8_0_BYTES`] bytes a block).
pub const GGML_Q8_0: i32 = 8;
pub const Q8_0_BLOCK: usize = 32;
pub const Q8_0_BYTES: usize = 34;
/// The file type of a file whose matrices are `q8_0`: ggml's `GGML_FTYPE_MOSTLY_Q8_0` (7) plus
/// its quantisation version (2) times 1000, as whisper.cpp's `quantize` writes it.
pub const FILE_MOSTLY_Q8_0: i32 = 2 * 1000 + 7;

/// Walk a GGML whisper file's headers without loading it, checking that every count is sane and
/// that the tensors end exactly at the end of the file. whisper.cpp trusts these numbers (a
/// damaged file makes it throw a C++ exception, which aborts the process), so a file must pass
/// this before it is handed over.
pub fn check_ggml_file(path: &Path) -> Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let corrupt = |detail: String| Error::ModelCorrupt {
        path: path.into(),
        detail,
    };
    let mut f = std::io::BufReader::new(
        std::fs::File::open(path).map_err(Error::io(format!("opening {}", path.display())))?,
    );
    let len = std::fs::metadata(path)
        .map_err(Error::io(format!("reading {}", path.display())))?
        .len();
    let mut pos = 0u64;
    let i32_at = |f: &mut std::io::BufReader<std::fs::File>, pos: &mut u64| -> Result<i64> {
        let mut b = [0u8; 4];
        f.read_exact(&mut b)
            .map_err(|_| corrupt(format!("it ends early, at byte {pos}")))?;
        *pos += 4;
        Ok(i32::from_le_bytes(b) as i64)
    };
    let skip = |f: &mut std::io::BufReader<std::fs::File>, pos: &mut u64, n: i64| -> Result<()> {
        *pos += n as u64;
        if *pos > len {
            return Err(corrupt(format!(
                "a section runs past the end of the file ({} bytes)",
                len
            )));
        }
        f.seek(SeekFrom::Start(*pos))
            .map(|_| ())
            .map_err(Error::io("reading the whisper model"))
    };
    if i32_at(&mut f, &mut pos)? as u32 != GGML_MAGIC {
        return Err(corrupt("it does not start with the GGML magic".into()));
    }
    let h: Vec<i64> = (0..11)
        .map(|_| i32_at(&mut f, &mut pos))
        .collect::<Result<_>>()?;
    // The file type: a ggml type, plus 1000 times the quantisation version for a quantised file.
    if h[..10].iter().any(|&v| !(1..=1_000_000).contains(&v))
        || !(0..=32).contains(&(h[10] % 1000))
        || !(0..=2).contains(&(h[10] / 1000))
    {
        return Err(corrupt(format!("its dimensions make no sense: {h:?}")));
    }
    let (n_mel, n_fft) = (i32_at(&mut f, &mut pos)?, i32_at(&mut f, &mut pos)?);
    if !(1..=512).contains(&n_mel) || !(1..=4096).contains(&n_fft) {
        return Err(corrupt(format!("its mel filterbank is {n_mel}x{n_fft}")));
    }
    skip(&mut f, &mut pos, n_mel * n_fft * 4)?;
    let n_vocab = i32_at(&mut f, &mut pos)?;
    if !(0..=1_000_000).contains(&n_vocab) {
        return Err(corrupt(format!("its vocabulary has {n_vocab} entries")));
    }
    for _ in 0..n_vocab {
        let l = i32_at(&mut f, &mut pos)?;
        if !(0..=4096).contains(&l) {
            return Err(corrupt(format!("a vocabulary entry is {l} bytes long")));
        }
        skip(&mut f, &mut pos, l)?;
    }
    let mut tensors = 0;
    while pos < len {
        let (n_dims, name_len, ftype) = (
            i32_at(&mut f, &mut pos)?,
            i32_at(&mut f, &mut pos)?,
            i32_at(&mut f, &mut pos)?,
        );
        if !matches!(ftype as i32, GGML_F32 | GGML_F16 | GGML_Q8_0) {
            return Err(corrupt(format!(
                "tensor {tensors} has type {ftype}; this build reads f32, f16 and q8_0 tensors"
            )));
        }
        if !(1..=4).contains(&n_dims) || !(1..=256).contains(&name_len) {
            return Err(corrupt(format!("tensor {tensors} has a malformed header")));
        }
        let mut n: i64 = 1;
        for i in 0..n_dims {
            let d = i32_at(&mut f, &mut pos)?;
            if !(1..=1 << 24).contains(&d) {
                return Err(corrupt(format!("tensor {tensors} has a dimension of {d}")));
            }
            // q8_0 blocks run along the innermost dimension (written first).
            if i == 0 && ftype as i32 == GGML_Q8_0 && d % Q8_0_BLOCK as i64 != 0 {
                return Err(corrupt(format!(
                    "tensor {tensors} is q8_0 with rows of {d}, not whole blocks"
                )));
            }
            n = n.saturating_mul(d);
        }
        let bytes = match ftype as i32 {
            GGML_F32 => n.saturating_mul(4),
            GGML_F16 => n.saturating_mul(2),
            _ => (n / Q8_0_BLOCK as i64).saturating_mul(Q8_0_BYTES as i64),
        };
        skip(&mut f, &mut pos, name_len)?;
        skip(&mut f, &mut pos, bytes)?;
        tensors += 1;
    }
    if tensors == 0 {
        return Err(corrupt("it holds no weights".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::whisper_ggml::tests::tiny_model_of;
    use crate::models::whisper_ggml::{read_ct2, write_ggml};

    #[test]
    fn the_file_check_accepts_a_whole_file_and_rejects_every_truncation() {
        // Width 2: an f16 file; width 32: a q8_0 one.
        for d in [2, 32] {
            file_check_at_width(d);
        }
    }

    fn file_check_at_width(d: usize) {
        let vars = read_ct2(&tiny_model_of(d)).unwrap();
        let mut out = Vec::new();
        write_ggml(&mut out, &vars, (&[3, 4], &[0.5; 12]), &[b"a".to_vec()]).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.bin");
        std::fs::write(&p, &out).unwrap();
        check_ggml_file(&p).unwrap();
        for cut in [4, 20, 60, out.len() / 2, out.len() - 1] {
            std::fs::write(&p, &out[..cut]).unwrap();
            assert!(
                matches!(check_ggml_file(&p), Err(Error::ModelCorrupt { .. })),
                "cut at {cut}"
            );
        }
        let mut garbage = b"lmgg".to_vec();
        garbage.extend(std::iter::repeat(0xAB).take(500));
        std::fs::write(&p, &garbage).unwrap();
        assert!(check_ggml_file(&p).is_err());
    }
}
