//! Reading and writing `.npy` files, including the descrs ml_dtypes uses for the types
//! numpy lacks (`<V2` bfloat16, `|V1` float8 and 4-bit, `<f1` float8e5m2) and `<U`n
//! strings.
//!
//! Reading streams: the magic and header are parsed and checked (shape, type, and the bytes
//! the tensor will hold, against a cap) before any of the body is read, and the body is
//! read to exactly its declared length. Writing streams from the tensor's own bytes.
//!
//! ```
//! use wgpu_pad::{npy, DataType, Tensor};
//! let t = Tensor::from_slice(DataType::Int16, vec![2], &[1i16, -2]).unwrap();
//! let mut file = Vec::new();
//! npy::write(&mut file, &t, &npy::Descr::parse("<i2").unwrap()).unwrap();
//! let (back, descr) = npy::read(&mut file.as_slice(), None, 1 << 20).unwrap();
//! assert_eq!((back, descr.to_string()), (t, "<i2".to_string()));
//! ```

use std::io::{Read, Write};

use crate::dtype::{DataType, ElementWidth};
use crate::error::{PadError, Result};
use crate::memory::{try_filled, try_with_capacity};
use crate::tensor::{element_count, pack_nibbles_into, unpack_nibbles_into, Tensor, TensorData};

const MAGIC: &[u8] = b"\x93NUMPY";
/// Headers past this length are refused (numpy's own limit is 10 000 bytes by default).
const MAX_HEADER: usize = 1 << 16;

fn err<T>(reason: impl Into<String>) -> Result<T> {
    Err(PadError::Npy { reason: reason.into() })
}

/// A `.npy` element descr such as `<f4`, `|V1` or `<U7`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descr {
    /// `<`, `>`, `|` or `=`.
    pub order: char,
    /// numpy's kind letter: `b`, `i`, `u`, `f`, `c`, `U` or `V`.
    pub kind: char,
    /// Bytes per element as the descr says (for `U`, characters).
    pub size: usize,
}

impl Descr {
    /// Parses a descr string.
    pub fn parse(s: &str) -> Result<Descr> {
        let mut chars = s.chars();
        let (order, rest) = match s.chars().next() {
            Some(c @ ('<' | '>' | '|' | '=')) => {
                chars.next();
                (c, chars.as_str())
            }
            _ => ('|', s),
        };
        let mut it = rest.chars();
        let kind = it.next().unwrap_or(' ');
        let size: usize = match it.as_str().parse() {
            Ok(n) if n > 0 && n <= 1 << 20 => n,
            _ => return err(format!("unsupported descr {s:?}")),
        };
        if !matches!(kind, 'b' | 'i' | 'u' | 'f' | 'c' | 'U' | 'V') {
            return err(format!("unsupported descr {s:?}"));
        }
        Ok(Descr { order, kind, size })
    }

    /// Bytes per element in the file.
    pub fn item_bytes(&self) -> usize {
        if self.kind == 'U' {
            self.size * 4
        } else {
            self.size
        }
    }

    fn big_endian(&self) -> bool {
        self.order == '>' || (self.order == '=' && cfg!(target_endian = "big"))
    }

    /// The type numpy's descr implies, if it says one.
    pub fn default_type(&self) -> Option<DataType> {
        use DataType::*;
        Some(match (self.kind, self.size) {
            ('b', 1) => Bool,
            ('i', 1) => Int8,
            ('i', 2) => Int16,
            ('i', 4) => Int32,
            ('i', 8) => Int64,
            ('u', 1) => Uint8,
            ('u', 2) => Uint16,
            ('u', 4) => Uint32,
            ('u', 8) => Uint64,
            ('f', 1) => Float8e5m2,
            ('f', 2) => Float16,
            ('f', 4) => Float32,
            ('f', 8) => Float64,
            ('c', 8) => Complex64,
            ('c', 16) => Complex128,
            ('U', _) => String,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Descr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}{}", self.order, self.kind, self.size)
    }
}

/// A parsed `.npy` file held in memory: descr, shape, and the data in C order and
/// little-endian. [`read`] streams instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Npy {
    /// The descr as the file gives it.
    pub descr: Descr,
    /// The shape.
    pub shape: Vec<usize>,
    /// Element bytes, C order, little-endian (strings: UTF-32LE, `descr.size` characters each).
    pub data: Vec<u8>,
}

/// A `.npy` header: what the body holds and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The descr as the file gives it.
    pub descr: Descr,
    /// Whether the body is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// The shape.
    pub shape: Vec<usize>,
    /// Bytes before the body: magic, version, header length and header.
    pub data_offset: u64,
}

impl Header {
    /// The body's length as the header declares it; `None` past 2^64.
    pub fn data_bytes(&self) -> Option<u64> {
        element_count(&self.shape)?.checked_mul(self.descr.item_bytes() as u64)
    }

    /// The whole file's length as the header declares it.
    pub fn file_bytes(&self) -> Option<u64> {
        self.data_bytes()?.checked_add(self.data_offset)
    }
}

/// A tiny reader of the header's Python dict literal.
struct HeaderParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl HeaderParser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn string(&mut self) -> Result<String> {
        self.skip_ws();
        let q = match self.s.get(self.i) {
            Some(&q @ (b'\'' | b'"')) => q,
            _ => return err("header: expected a quoted string"),
        };
        let start = self.i + 1;
        let end = self.s[start..].iter().position(|&c| c == q).map(|p| start + p);
        let Some(end) = end else {
            return err("header: unterminated string");
        };
        self.i = end + 1;
        Ok(String::from_utf8_lossy(&self.s[start..end]).into_owned())
    }
    fn word(&mut self) -> String {
        self.skip_ws();
        let start = self.i;
        while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_') {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }
    fn shape(&mut self) -> Result<Vec<usize>> {
        if !self.eat(b'(') {
            return err("header: shape is not a tuple");
        }
        let mut dims = Vec::new();
        loop {
            if self.eat(b')') {
                return Ok(dims);
            }
            // A sign is read with the digits, so that the message shows the value.
            self.skip_ws();
            let sign = if self.eat(b'-') { "-" } else { "" };
            let w = format!("{sign}{}", self.word());
            let dim: usize = match w.trim_end_matches('L').parse() {
                Ok(d) => d,
                Err(_) => return err(format!("header: bad dimension {w:?} (not a non-negative integer)")),
            };
            if dims.len() >= 64 {
                return err("header: more than 64 dimensions");
            }
            dims.push(dim);
            if !self.eat(b',') && !self.eat(b')') {
                return err("header: malformed shape tuple");
            } else if self.s.get(self.i - 1) == Some(&b')') {
                return Ok(dims);
            }
        }
    }

    fn dict(&mut self) -> Result<(Descr, bool, Vec<usize>)> {
        let (mut descr, mut fortran, mut shape) = (None, None, None);
        if !self.eat(b'{') {
            return err("header: not a dict");
        }
        loop {
            if self.eat(b'}') {
                break;
            }
            let key = self.string()?;
            if !self.eat(b':') {
                return err("header: expected ':'");
            }
            match key.as_str() {
                "descr" => descr = Some(Descr::parse(&self.string()?)?),
                "fortran_order" => {
                    fortran = Some(match self.word().as_str() {
                        "True" => true,
                        "False" => false,
                        w => return err(format!("header: fortran_order {w:?}")),
                    })
                }
                "shape" => shape = Some(self.shape()?),
                k => return err(format!("header: unknown key {k:?}")),
            }
            if !self.eat(b',') {
                if self.eat(b'}') {
                    break;
                }
                return err("header: expected ',' or '}'");
            }
        }
        match (descr, fortran, shape) {
            (Some(d), Some(f), Some(s)) => Ok((d, f, s)),
            _ => err("header: needs descr, fortran_order and shape"),
        }
    }
}

/// Reads as much of `buf` as the reader has; returns how many bytes that was.
fn read_full<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match r.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return err(format!("reading: {e}")),
        }
    }
    Ok(done)
}

/// Reads and checks the magic, version and header, and nothing past them.
pub fn read_header<R: Read + ?Sized>(r: &mut R) -> Result<Header> {
    let mut prefix = [0u8; 12];
    let got = read_full(r, &mut prefix[..10])?;
    if got < 10 || &prefix[..6] != MAGIC {
        return err("not a .npy file (bad magic or truncated)");
    }
    let (header_len, header_start) = match prefix[6] {
        1 => (u16::from_le_bytes([prefix[8], prefix[9]]) as usize, 10),
        2 | 3 => {
            if read_full(r, &mut prefix[10..12])? < 2 {
                return err("not a .npy file (truncated)");
            }
            (u32::from_le_bytes(prefix[8..12].try_into().expect("4 bytes")) as usize, 12)
        }
        v => return err(format!("unsupported .npy version {v}")),
    };
    if header_len > MAX_HEADER {
        return err(format!("header of {header_len} bytes is longer than the {MAX_HEADER} this reader accepts"));
    }
    let mut header = vec![0u8; header_len];
    let got = read_full(r, &mut header)?;
    if got < header_len {
        return err(format!("header of {header_len} bytes does not fit the file of {} bytes", header_start + got));
    }
    let (descr, fortran_order, shape) = HeaderParser { s: &header, i: 0 }.dict()?;
    let header = Header { descr, fortran_order, shape, data_offset: (header_start + header_len) as u64 };
    if header.data_bytes().is_none() {
        return err(format!("shape {:?} of {} needs more than 2^64 data bytes", header.shape, header.descr));
    }
    Ok(header)
}

/// Reads a whole `.npy` from `r` as a tensor of `dtype` (see [`to_tensor`] for when the
/// type must be named), refusing before the body is read if the tensor would hold more
/// than `max_bytes` (strings: their contents, and 24 bytes each). Returns the file's descr.
pub fn read<R: Read + ?Sized>(r: &mut R, dtype: Option<DataType>, max_bytes: u64) -> Result<(Tensor, Descr)> {
    let header = read_header(r)?;
    let tensor = read_body(r, &header, dtype, max_bytes)?;
    Ok((tensor, header.descr))
}

/// Reads the body that `header` (from [`read_header`] on the same reader) declares:
/// exactly that many bytes, refusing a shorter stream. Big-endian and Fortran-ordered
/// bodies become little-endian and C order.
pub fn read_body<R: Read + ?Sized>(
    r: &mut R,
    header: &Header,
    dtype: Option<DataType>,
    max_bytes: u64,
) -> Result<Tensor> {
    let descr = &header.descr;
    let dtype = resolve_type(descr, dtype)?;
    let count = element_count(&header.shape).unwrap_or(u64::MAX);
    let declared = header.data_bytes().unwrap_or(u64::MAX);
    let held = match dtype.width() {
        ElementWidth::String => count.checked_mul(STRING_BYTES),
        _ => dtype.storage_bytes(count),
    };
    if held.is_none_or(|h| h > max_bytes) {
        return Err(PadError::TooLarge {
            what: format!(
                "shape {:?} of {dtype} holds {} bytes, over the limit of {max_bytes}",
                header.shape,
                held.map_or("more than 2^64".to_string(), |h| h.to_string())
            ),
        });
    }
    let count = usize::try_from(count).map_err(|_| PadError::TooLarge { what: format!("{count} elements") })?;
    let item = descr.item_bytes();
    let mut body = Body { r, left: declared, declared };
    let fortran = header.fortran_order && header.shape.len() > 1;
    match dtype.width() {
        ElementWidth::String => {
            let mut strings: Vec<String> = try_with_capacity(count, "the strings")?;
            let mut budget = Budget { left: max_bytes - count as u64 * STRING_BYTES, max_bytes };
            let mut block = vec![0u8; item * (BLOCK / item).max(1)];
            while strings.len() < count {
                let n = (count - strings.len()).min(block.len() / item);
                let bytes = &mut block[..n * item];
                body.fill(bytes)?;
                if descr.big_endian() {
                    swap_bytes(bytes, descr);
                }
                for e in bytes.chunks_exact(item) {
                    strings.push(decode_utf32(e, strings.len(), &mut budget)?);
                }
            }
            if fortran {
                strings = fortran_to_c(strings, &header.shape, 1)?;
            }
            Tensor::from_strings(header.shape.clone(), strings)
        }
        ElementWidth::Bits4 => {
            let mut unpacked: Vec<u8> = try_filled(count, 0, "the unpacked 4-bit input")?;
            body.fill(&mut unpacked)?;
            if let Some(i) = unpacked.iter().position(|&b| b > 0x0f) {
                return err(format!("{dtype} element {i} is {:#04x}: the high nibble must be 0", unpacked[i]));
            }
            if fortran {
                unpacked = fortran_to_c(unpacked, &header.shape, 1)?;
            }
            let mut packed = try_filled(count.div_ceil(2), 0u8, "the 4-bit input")?;
            pack_nibbles_into(&unpacked, &mut packed);
            Tensor::from_bytes(dtype, header.shape.clone(), packed)
        }
        _ => {
            let mut data = try_filled(count * item, 0u8, "the input")?;
            body.fill(&mut data)?;
            if descr.big_endian() {
                swap_bytes(&mut data, descr);
            }
            if fortran {
                data = fortran_to_c(data, &header.shape, item)?;
            }
            Tensor::from_bytes(dtype, header.shape.clone(), data)
        }
    }
}

/// Bytes a string element is counted as besides its contents (a `String`'s own size).
const STRING_BYTES: u64 = std::mem::size_of::<String>() as u64;
/// Bytes read or written at a time where the data must be converted on the way.
const BLOCK: usize = 1 << 16;

/// The body still to come, which must hold all that the header declared.
struct Body<'a, R: Read + ?Sized> {
    r: &'a mut R,
    left: u64,
    declared: u64,
}

impl<R: Read + ?Sized> Body<'_, R> {
    fn fill(&mut self, buf: &mut [u8]) -> Result<()> {
        let got = read_full(self.r, buf)?;
        self.left -= got as u64;
        if got < buf.len() {
            return err(format!(
                "truncated: the header declares {} data bytes, the file has {}",
                self.declared,
                self.declared - self.left
            ));
        }
        Ok(())
    }
}

/// What strings may still take of the memory cap.
struct Budget {
    left: u64,
    max_bytes: u64,
}

/// One UTF-32 element as a string: trailing NULs are padding (as numpy reads them),
/// interior NULs are characters.
fn decode_utf32(units: &[u8], index: usize, budget: &mut Budget) -> Result<String> {
    let units: Vec<u32> = units.chunks_exact(4).map(|u| u32::from_le_bytes(u.try_into().expect("4 bytes"))).collect();
    let len = units.iter().rposition(|&u| u != 0).map_or(0, |p| p + 1);
    let mut s = String::new();
    for &u in &units[..len] {
        let c = char::from_u32(u)
            .ok_or_else(|| PadError::Npy { reason: format!("element {index} is not valid UTF-32") })?;
        s.push(c);
    }
    let bytes = s.len() as u64;
    if bytes > budget.left {
        return Err(PadError::TooLarge {
            what: format!("the strings up to element {index} hold more than the limit of {} bytes", budget.max_bytes),
        });
    }
    budget.left -= bytes;
    Ok(s)
}

/// Parses a whole `.npy` file held in memory. Fortran-ordered and big-endian data are
/// converted to C order and little-endian.
pub fn parse(bytes: &[u8]) -> Result<Npy> {
    let mut r = bytes;
    let header = read_header(&mut r)?;
    let expected = header.data_bytes();
    if expected != Some(r.len() as u64) {
        return err(format!(
            "shape {:?} of {} needs {} data bytes, the file has {}",
            header.shape,
            header.descr,
            expected.map_or("more than 2^64".into(), |e| e.to_string()),
            r.len()
        ));
    }
    let mut data = try_with_capacity(r.len(), "the .npy data")?;
    data.extend_from_slice(r);
    if header.descr.big_endian() {
        swap_bytes(&mut data, &header.descr);
    }
    if header.fortran_order && header.shape.len() > 1 {
        data = fortran_to_c(data, &header.shape, header.descr.item_bytes())?;
    }
    Ok(Npy { descr: header.descr, shape: header.shape, data })
}

/// Reverses byte order per scalar (complex: per half; strings: per UTF-32 unit).
fn swap_bytes(data: &mut [u8], descr: &Descr) {
    let unit = match descr.kind {
        'c' => descr.size / 2,
        'U' => 4,
        'V' => 1,
        _ => descr.size,
    };
    if unit > 1 {
        data.chunks_exact_mut(unit).for_each(|c| c.reverse());
    }
}

/// Reorders items (of `item` values each) from column-major to row-major order.
fn fortran_to_c<T: Clone + Default>(mut data: Vec<T>, shape: &[usize], item: usize) -> Result<Vec<T>> {
    let count = data.len() / item.max(1);
    let mut out = try_with_capacity(data.len(), "the reordered data")?;
    let mut coord = vec![0usize; shape.len()];
    for _ in 0..count {
        // Column-major offset of this C-order coordinate.
        let (mut f, mut stride) = (0, 1);
        for (d, &n) in shape.iter().enumerate() {
            f += coord[d] * stride;
            stride *= n;
        }
        out.extend(data[f * item..(f + 1) * item].iter_mut().map(std::mem::take));
        for d in (0..shape.len()).rev() {
            coord[d] += 1;
            if coord[d] < shape[d] {
                break;
            }
            coord[d] = 0;
        }
    }
    Ok(out)
}

/// The type a descr holds, given the type asked for (if any).
fn resolve_type(d: &Descr, dtype: Option<DataType>) -> Result<DataType> {
    match (dtype, d.default_type()) {
        (None, Some(t)) => Ok(t),
        (None, None) => err(format!("descr {d} does not say the type; name it (--dtype)")),
        (Some(t), implied) => {
            let same_width = match t.width() {
                ElementWidth::Bits4 => d.size == 1,
                ElementWidth::String => d.kind == 'U',
                w => w.bytes() == Some(d.size),
            };
            let compatible = implied == Some(t) || (same_width && matches!(d.kind, 'V' | 'u'));
            if !compatible {
                return err(format!("descr {d} cannot hold {t}"));
            }
            Ok(t)
        }
    }
}

/// The tensor a `.npy` holds, as `dtype` (needed where the descr cannot say, `V` descrs;
/// it may also reinterpret an unsigned integer array of the same width). 4-bit types are
/// one element per byte in the file, in the low nibble.
pub fn to_tensor(npy: &Npy, dtype: Option<DataType>) -> Result<Tensor> {
    // Already little-endian and in C order.
    let header = Header {
        descr: Descr { order: '<', ..npy.descr.clone() },
        fortran_order: false,
        shape: npy.shape.clone(),
        data_offset: 0,
    };
    read_body(&mut npy.data.as_slice(), &header, dtype, u64::MAX)
}

/// The descr `tensor` is written with, given the input's: the same, except that a string
/// descr widens if an element needs more characters.
fn output_descr(tensor: &Tensor, like: &Descr) -> Descr {
    let mut descr = like.clone();
    if let TensorData::Strings(strings) = tensor.data() {
        descr.size = strings.iter().map(|s| s.chars().count()).max().unwrap_or(0).max(like.size).max(1);
    }
    descr
}

fn header_text(tensor: &Tensor, descr: &Descr) -> Result<Vec<u8>> {
    let shape = match tensor.shape() {
        [d] => format!("({d},)"),
        s => format!("({})", s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad so the data starts on a 64-byte boundary, newline-terminated, as numpy does.
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat(total.next_multiple_of(64) - total));
    header.push('\n');
    if header.len() > u16::MAX as usize {
        return err("header too long");
    }
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    Ok(out)
}

/// The bytes [`write()`] would write for `tensor` with descr `like`: check it against a cap
/// before writing (a string descr widens to the longest element, for every element).
pub fn encoded_len(tensor: &Tensor, like: &Descr) -> Result<u64> {
    let descr = output_descr(tensor, like);
    let header = header_text(tensor, &descr)?.len() as u64;
    let body = (tensor.len() as u64).checked_mul(descr.item_bytes() as u64);
    body.and_then(|b| b.checked_add(header))
        .ok_or_else(|| PadError::TooLarge { what: format!("shape {:?} of {descr} as .npy", tensor.shape()) })
}

/// Writes `tensor` as a `.npy` with descr `like` (an input's descr: the output keeps it;
/// a string descr widens if an element needs more characters). Streams from the tensor's
/// own bytes: little-endian fixed-width data is written as it is, anything converted
/// (big-endian, 4-bit, strings) goes through a small block buffer.
pub fn write<W: Write + ?Sized>(w: &mut W, tensor: &Tensor, like: &Descr) -> Result<()> {
    let descr = output_descr(tensor, like);
    let io = |e: std::io::Error| PadError::Npy { reason: format!("writing: {e}") };
    w.write_all(&header_text(tensor, &descr)?).map_err(io)?;
    let mut block: Vec<u8> = Vec::new();
    match tensor.data() {
        TensorData::Strings(strings) => {
            let item = descr.item_bytes();
            for group in strings.chunks((BLOCK / item).max(1)) {
                block.clear();
                for s in group {
                    let n = s.chars().count();
                    s.chars().for_each(|c| block.extend_from_slice(&(c as u32).to_le_bytes()));
                    block.resize(block.len() + (descr.size - n) * 4, 0);
                }
                if descr.big_endian() {
                    swap_bytes(&mut block, &descr);
                }
                w.write_all(&block).map_err(io)?;
            }
        }
        TensorData::Bytes(b) if tensor.dtype().width() == ElementWidth::Bits4 => {
            let count = tensor.len();
            for start in (0..count).step_by(BLOCK) {
                let n = BLOCK.min(count - start);
                block.resize(n, 0);
                unpack_nibbles_into(&b[start / 2..(start + n).div_ceil(2)], &mut block);
                w.write_all(&block).map_err(io)?;
            }
        }
        TensorData::Bytes(b) if descr.big_endian() => {
            let item = descr.item_bytes();
            for part in b.chunks(BLOCK / item * item) {
                block.clear();
                block.extend_from_slice(part);
                swap_bytes(&mut block, &descr);
                w.write_all(&block).map_err(io)?;
            }
        }
        TensorData::Bytes(b) => w.write_all(b).map_err(io)?,
    }
    Ok(())
}

/// [`write()`] into a new buffer, allocated fallibly.
pub fn to_bytes(tensor: &Tensor, like: &Descr) -> Result<Vec<u8>> {
    let len = encoded_len(tensor, like)?;
    let len = usize::try_from(len).map_err(|_| PadError::TooLarge { what: format!("{len} bytes of .npy") })?;
    let mut out = try_with_capacity(len, "the .npy file")?;
    write(&mut out, tensor, like)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&[1, 0]);
        v.extend_from_slice(&(header.len() as u16).to_le_bytes());
        v.extend_from_slice(header.as_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn round_trip_keeps_descr() {
        let t = Tensor::from_slice(DataType::Int16, vec![2, 1], &[1i16, -2]).unwrap();
        let d = Descr::parse("<i2").unwrap();
        let bytes = to_bytes(&t, &d).unwrap();
        let npy = parse(&bytes).unwrap();
        assert_eq!(npy.descr, d);
        assert_eq!(to_tensor(&npy, None).unwrap(), t);
        let s = Tensor::from_strings(vec![2], vec!["ab".into(), "é".into()]).unwrap();
        let npy = parse(&to_bytes(&s, &Descr::parse("<U1").unwrap()).unwrap()).unwrap();
        assert_eq!(npy.descr.to_string(), "<U2");
        assert_eq!(to_tensor(&npy, None).unwrap(), s);
    }

    #[test]
    fn streaming_reads_stop_at_the_declared_length_and_keep_interior_nuls() {
        let units = |s: &[u32]| s.iter().flat_map(|u| u.to_le_bytes()).collect::<Vec<u8>>();
        let body = [units(&[97, 0, 98]), units(&[0, 120, 0])].concat();
        let f = file("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", &body);
        let (t, _) = read(&mut f.as_slice(), None, 1 << 20).unwrap();
        assert_eq!(t.strings().unwrap(), ["a\0b", "\0x"]);
        // Truncated: says how much there was; over the cap: refused before the body.
        let e = read(&mut &f[..f.len() - 3], None, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("declares 24 data bytes, the file has 21"), "{e}");
        let e = read(&mut &f[..f.len() - 24], None, 10).unwrap_err();
        assert!(matches!(e, PadError::TooLarge { .. }), "{e}");
        // Trailing bytes past the body are left in the reader.
        let mut longer = [f.clone(), vec![7]].concat();
        let mut r = longer.as_mut_slice() as &[u8];
        read(&mut r, None, 1 << 20).unwrap();
        assert_eq!(r, [7]);
    }

    #[test]
    fn big_endian_and_fortran_are_converted() {
        let f = file("{'descr': '>i2', 'fortran_order': True, 'shape': (2, 2), }", &[0, 1, 0, 2, 0, 3, 0, 4]);
        let t = to_tensor(&parse(&f).unwrap(), None).unwrap();
        assert_eq!(t.as_slice::<i16>().unwrap(), &[1, 3, 2, 4]);
    }

    #[test]
    fn hostile_headers_are_refused() {
        let huge = file("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000000000,), }", &[0; 8]);
        assert!(parse(&huge).unwrap_err().to_string().contains("needs"));
        let over =
            file("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", &[]);
        assert!(parse(&over).is_err());
        assert!(parse(b"\x93NUMPY\x01\x00\xff\xff{").is_err());
        assert!(parse(&file("{'descr': '<S3', 'fortran_order': False, 'shape': (), }", &[0; 3])).is_err());
        assert!(parse(&file("{'descr': '<f4', 'shape': (), }", &[0; 4])).is_err());
        let nib = parse(&file("{'descr': '|V1', 'fortran_order': False, 'shape': (1,), }", &[0x10])).unwrap();
        assert!(to_tensor(&nib, Some(DataType::Int4)).unwrap_err().to_string().contains("high nibble"));
        assert!(to_tensor(&nib, None).is_err());
        assert!(to_tensor(&nib, Some(DataType::Float32)).is_err());
        // Round six: a negative dimension is named by its value.
        let negative = parse(&file("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }", &[])).unwrap_err();
        assert!(negative.to_string().contains("bad dimension \"-2\""), "{negative}");
    }
}
