//! Just enough of the ONNX file format to take a model's weights out of it: the graph's nodes
//! (operator, inputs, outputs) and its initializers (name, shape, element type, data). ONNX is
//! protocol buffers; this reads the wire format directly (varints, and length-delimited fields
//! inside length-delimited fields) and skips every field it does not need. Everything is
//! bounds-checked: a damaged or hostile file is an error naming what was wrong, never a panic.

use std::collections::HashMap;

/// An ONNX element type this reader knows (`TensorProto.DataType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataType {
    F32,
    I8,
    I64,
    Other(i32),
}

impl DataType {
    fn from_code(code: i32) -> DataType {
        match code {
            1 => DataType::F32,
            3 => DataType::I8,
            7 => DataType::I64,
            c => DataType::Other(c),
        }
    }
}

/// A node of the graph: what it computes from which values into which.
#[derive(Debug, Default)]
pub struct Node<'a> {
    pub op_type: &'a str,
    pub inputs: Vec<&'a str>,
    pub outputs: Vec<&'a str>,
}

/// An initializer: a constant tensor stored in the file.
#[derive(Debug)]
pub struct Tensor<'a> {
    pub dims: Vec<i64>,
    pub data_type: DataType,
    /// Its elements as stored, little-endian (`raw_data`), or the packed `float_data` /
    /// `int32_data` field where the writer used those.
    data: Data<'a>,
}

#[derive(Debug)]
enum Data<'a> {
    Raw(&'a [u8]),
    /// `float_data` (packed f32) or `int32_data` (varints): the field's bytes.
    Floats(&'a [u8]),
    Int32s(&'a [u8]),
    None,
}

/// The graph of a model file, borrowing the file's bytes.
pub struct Graph<'a> {
    pub nodes: Vec<Node<'a>>,
    pub initializers: HashMap<&'a str, Tensor<'a>>,
}

/// What was wrong with the file.
pub type ParseError = String;

impl<'a> Graph<'a> {
    /// Read the graph of the model file `bytes`.
    pub fn parse(bytes: &'a [u8]) -> Result<Graph<'a>, ParseError> {
        let mut graph = None;
        let mut r = Reader::new(bytes);
        while let Some((field, value)) = r.field()? {
            // ModelProto.graph = 7
            if field == 7 {
                graph = Some(value.bytes("the model's graph")?);
            }
        }
        let graph = graph.ok_or("the file holds no graph (not an ONNX model)")?;
        let mut out = Graph {
            nodes: Vec::new(),
            initializers: HashMap::new(),
        };
        let mut r = Reader::new(graph);
        while let Some((field, value)) = r.field()? {
            match field {
                // GraphProto.node = 1
                1 => out.nodes.push(node(value.bytes("a node")?)?),
                // GraphProto.initializer = 5
                5 => {
                    let (name, t) = tensor(value.bytes("an initializer")?)?;
                    out.initializers.insert(name, t);
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// The initializer `name`, or why it cannot be had.
    pub fn tensor(&self, name: &str) -> Result<&Tensor<'a>, ParseError> {
        self.initializers
            .get(name)
            .ok_or_else(|| format!("it has no weights named '{name}'"))
    }

    /// The node that makes the value `name`.
    pub fn producer(&self, name: &str) -> Option<&Node<'a>> {
        self.nodes.iter().find(|n| n.outputs.contains(&name))
    }
}

impl Tensor<'_> {
    /// Its elements as f32, if it holds f32 and has the shape `dims`.
    pub fn f32s(&self, name: &str, dims: &[i64]) -> Result<Vec<f32>, ParseError> {
        self.expect(name, DataType::F32, dims)?;
        let count = self.count();
        let v: Vec<f32> = match self.data {
            Data::Raw(b) | Data::Floats(b) => {
                if b.len() != count * 4 {
                    return Err(short(name, b.len(), count * 4));
                }
                b.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            }
            _ => return Err(format!("the weights '{name}' hold no f32 data")),
        };
        Ok(v)
    }

    /// Its elements as i8, if it holds int8 and has the shape `dims`.
    pub fn i8s(&self, name: &str, dims: &[i64]) -> Result<Vec<i8>, ParseError> {
        self.expect(name, DataType::I8, dims)?;
        let count = self.count();
        match self.data {
            Data::Raw(b) => {
                if b.len() != count {
                    return Err(short(name, b.len(), count));
                }
                Ok(b.iter().map(|&x| x as i8).collect())
            }
            Data::Int32s(b) => {
                let mut r = Reader::new(b);
                let mut v = Vec::with_capacity(count);
                while !r.done() {
                    v.push(r.varint()? as i64 as i8);
                }
                if v.len() != count {
                    return Err(short(name, v.len(), count));
                }
                Ok(v)
            }
            _ => Err(format!("the weights '{name}' hold no int8 data")),
        }
    }

    fn count(&self) -> usize {
        self.dims.iter().map(|&d| d.max(0) as usize).product()
    }

    fn expect(&self, name: &str, ty: DataType, dims: &[i64]) -> Result<(), ParseError> {
        if self.data_type != ty || self.dims != dims {
            return Err(format!(
                "the weights '{name}' are {:?} {:?}, expected {ty:?} {dims:?}",
                self.data_type, self.dims
            ));
        }
        Ok(())
    }
}

fn short(name: &str, got: usize, want: usize) -> ParseError {
    format!("the weights '{name}' hold {got} bytes where {want} were expected")
}

fn node(bytes: &[u8]) -> Result<Node<'_>, ParseError> {
    let mut n = Node::default();
    let mut r = Reader::new(bytes);
    while let Some((field, value)) = r.field()? {
        match field {
            1 => n.inputs.push(value.str("a node's input")?),
            2 => n.outputs.push(value.str("a node's output")?),
            4 => n.op_type = value.str("a node's operator")?,
            _ => {}
        }
    }
    Ok(n)
}

fn tensor(bytes: &[u8]) -> Result<(&str, Tensor<'_>), ParseError> {
    let mut name = "";
    let mut t = Tensor {
        dims: Vec::new(),
        data_type: DataType::Other(0),
        data: Data::None,
    };
    let mut r = Reader::new(bytes);
    while let Some((field, value)) = r.field()? {
        match (field, value) {
            // dims = 1, repeated int64: one varint each, or packed.
            (1, Value::Varint(d)) => t.dims.push(d as i64),
            (1, Value::Bytes(b)) => {
                let mut p = Reader::new(b);
                while !p.done() {
                    t.dims.push(p.varint()? as i64);
                }
            }
            (2, Value::Varint(c)) => t.data_type = DataType::from_code(c as i32),
            (4, Value::Bytes(b)) => t.data = Data::Floats(b),
            (5, Value::Bytes(b)) => t.data = Data::Int32s(b),
            (8, v) => name = v.str("a tensor's name")?,
            (9, Value::Bytes(b)) => t.data = Data::Raw(b),
            // data_location = 14: 1 is EXTERNAL (the data in another file, which we do not read).
            (14, Value::Varint(1)) => {
                return Err(format!("the weights '{name}' are kept in another file"))
            }
            _ => {}
        }
    }
    if t.dims.iter().any(|&d| !(0..=1 << 31).contains(&d)) {
        return Err(format!(
            "the weights '{name}' have an impossible shape {:?}",
            t.dims
        ));
    }
    Ok((name, t))
}

/// A field's value as the wire format carries it.
#[derive(Clone, Copy, Debug)]
enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

impl<'a> Value<'a> {
    fn bytes(self, what: &str) -> Result<&'a [u8], ParseError> {
        match self {
            Value::Bytes(b) => Ok(b),
            _ => Err(format!("{what} is not where the format puts it")),
        }
    }

    fn str(self, what: &str) -> Result<&'a str, ParseError> {
        std::str::from_utf8(self.bytes(what)?).map_err(|_| format!("{what} is not text"))
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn varint(&mut self) -> Result<u64, ParseError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self
                .buf
                .get(self.pos)
                .ok_or("the file ends inside a number")?;
            self.pos += 1;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a number runs on past ten bytes".into())
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], ParseError> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.pos.checked_add(n))
            .filter(|&e| e <= self.buf.len())
            .ok_or("a field runs past the end of the file (truncated?)")?;
        let b = &self.buf[self.pos..end];
        self.pos = end;
        Ok(b)
    }

    /// The next field's number and value, or `None` at the end.
    fn field(&mut self) -> Result<Option<(u64, Value<'a>)>, ParseError> {
        if self.done() {
            return Ok(None);
        }
        let key = self.varint()?;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::Fixed
            }
            2 => {
                let n = self.varint()?;
                Value::Bytes(self.take(n)?)
            }
            5 => {
                self.take(4)?;
                Value::Fixed
            }
            w => {
                return Err(format!(
                    "a field of wire type {w}, which ONNX files do not use"
                ))
            }
        };
        Ok(Some((key >> 3, value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn field(n: u64, body: &[u8], out: &mut Vec<u8>) {
        varint(n << 3 | 2, out);
        varint(body.len() as u64, out);
        out.extend_from_slice(body);
    }

    /// A one-node model with one int8 initializer, written by hand.
    fn model() -> Vec<u8> {
        let mut t = Vec::new();
        varint(1 << 3, &mut t);
        varint(2, &mut t); // dims 2
        varint(1 << 3, &mut t);
        varint(3, &mut t); // dims 3
        varint(2 << 3, &mut t);
        varint(3, &mut t); // int8
        field(8, b"w", &mut t);
        field(9, &[1, 2, 3, 0xff, 0xfe, 0x7f], &mut t);
        let mut n = Vec::new();
        field(1, b"x", &mut n);
        field(1, b"w", &mut n);
        field(2, b"y", &mut n);
        field(4, b"MatMul", &mut n);
        let mut g = Vec::new();
        field(1, &n, &mut g);
        field(5, &t, &mut g);
        let mut m = Vec::new();
        varint(1 << 3, &mut m);
        varint(8, &mut m); // ir_version, skipped
        field(7, &g, &mut m);
        m
    }

    #[test]
    fn reads_nodes_and_weights() {
        let bytes = model();
        let g = Graph::parse(&bytes).unwrap();
        assert_eq!(g.nodes.len(), 1);
        assert_eq!(g.nodes[0].op_type, "MatMul");
        assert_eq!(g.nodes[0].inputs, ["x", "w"]);
        assert_eq!(g.producer("y").unwrap().op_type, "MatMul");
        let w = g.tensor("w").unwrap().i8s("w", &[2, 3]).unwrap();
        assert_eq!(w, [1, 2, 3, -1, -2, 127]);
        assert!(
            g.tensor("w").unwrap().i8s("w", &[3, 2]).is_err(),
            "wrong shape"
        );
        assert!(
            g.tensor("w").unwrap().f32s("w", &[2, 3]).is_err(),
            "wrong type"
        );
        assert!(g.tensor("v").is_err());
    }

    #[test]
    fn every_truncation_and_damage_is_an_error_not_a_panic() {
        let bytes = model();
        for cut in 0..bytes.len() {
            let _ = Graph::parse(&bytes[..cut]);
        }
        let mut rng = 0x2545f4914f6cdd1du64;
        for _ in 0..20_000 {
            let mut b = bytes.clone();
            for _ in 0..3 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let i = (rng % b.len() as u64) as usize;
                b[i] = (rng >> 32) as u8;
            }
            if let Ok(g) = Graph::parse(&b) {
                if let Ok(t) = g.tensor("w") {
                    let _ = t.i8s("w", &[2, 3]);
                    let _ = t.f32s("w", &[2, 3]);
                }
            }
        }
        assert!(Graph::parse(b"not a model at all").is_err());
        assert!(Graph::parse(&[]).is_err());
    }
}
