//! StableHLO ops (generic text, as oxla's lowering prints them) turned
//! into VHLO ops, as StableHLO's `stablehlo-legalize-to-vhlo` pass does:
//! each op becomes its newest VHLO version, its attributes VHLO
//! attributes (dimension-number structs split into one attribute per
//! field), attributes it leaves out get StableHLO's defaults, and types
//! become VHLO types. Ops of the other dialects XLA reads (CHLO, which
//! JAX's own serializer expands with XLA's passes, and Shardy) are kept
//! as they are, with `unrealized_conversion_cast`s between VHLO and
//! builtin types around them, as the pass writes with
//! `allow_other_dialects`; StableHLO's deserializer (in JAX and in the
//! plugins) reads them back.

use super::VhloError;
use super::op_attributes::{OP_ATTRIBUTES, op_attributes};
use super::text::{Block, Op, Region};
use super::versions::{Version, introduced};

fn bad(what: impl Into<String>) -> VhloError {
    VhloError(what.into())
}

/// Top-level ops of a StableHLO module in VHLO form, and the oldest
/// StableHLO version that reads every op they use.
pub(crate) fn legalize(ops: &[Op]) -> Result<(Vec<Op>, Version), VhloError> {
    let mut l = Legalizer {
        version: Version::BYTECODE_6,
        casts: 0,
    };
    let ops = ops
        .iter()
        .map(|op| l.op(op))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    Ok((ops, l.version))
}

struct Legalizer {
    version: Version,
    casts: usize,
}

/// The VHLO scalar type of a builtin scalar type.
fn scalar(ty: &str) -> Option<String> {
    let known = [
        "bf16", "f16", "f32", "f64", "i2", "i4", "i8", "i16", "i32", "i64", "ui2", "ui4", "ui8",
        "ui16", "ui32", "ui64", "index", "none", "f8E4M3FN", "f8E5M2",
    ];
    match ty {
        "i1" => Some("!vhlo.bool_v1".to_string()),
        t if known.contains(&t) => Some(format!("!vhlo.{t}_v1")),
        _ => None,
    }
}

/// Calls `at` with each byte position of `text` outside brackets and
/// strings (the `>` of a `->` closes nothing) until it returns true.
fn scan_top_level(text: &str, mut at: impl FnMut(usize) -> bool) {
    let bytes = text.as_bytes();
    let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b'>' if i > 0 && bytes[i - 1] == b'-' => {}
            b')' | b']' | b'}' | b'>' => depth -= 1,
            _ if depth == 0 && at(i) => return,
            _ => {}
        }
    }
}

/// Splits `text` at top-level commas (outside brackets and strings).
fn split_top(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    scan_top_level(text, |i| {
        if text.as_bytes()[i] == b',' {
            parts.push(text[start..i].trim());
            start = i + 1;
        }
        false
    });
    let last = text[start..].trim();
    if !last.is_empty() {
        parts.push(last);
    }
    parts
}

/// A builtin type as a VHLO type.
pub(crate) fn vhlo_type(ty: &str) -> Result<String, VhloError> {
    let ty = ty.trim();
    if let Some(s) = scalar(ty) {
        return Ok(s);
    }
    if ty == "!stablehlo.token" {
        return Ok("!vhlo.token_v1".to_string());
    }
    if let Some(body) = ty.strip_prefix("tensor<").and_then(|t| t.strip_suffix('>')) {
        if body.contains(',') {
            return Err(bad(format!("{ty}: tensor encodings are not written")));
        }
        let mut dims = String::new();
        let mut rest = body;
        while let Some(x) = rest.find('x') {
            let dim = &rest[..x];
            if dim == "?" || dim.chars().all(|c| c.is_ascii_digit()) && !dim.is_empty() {
                dims.push_str(dim);
                dims.push('x');
                rest = &rest[x + 1..];
            } else {
                break;
            }
        }
        return Ok(format!("!vhlo.tensor_v1<{dims}{}>", vhlo_type(rest)?));
    }
    if let Some(inner) = ty
        .strip_prefix("complex<")
        .and_then(|t| t.strip_suffix('>'))
    {
        return Ok(format!("!vhlo.complex_v1<{}>", vhlo_type(inner)?));
    }
    if let Some(inner) = ty.strip_prefix("tuple<").and_then(|t| t.strip_suffix('>')) {
        let types = split_top(inner)
            .into_iter()
            .map(vhlo_type)
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(format!("!vhlo.tuple_v1<{}>", types.join(", ")));
    }
    if ty.starts_with('(') {
        let (inputs, outputs) = function_type(ty)?;
        let list = |types: &[String]| -> Result<String, VhloError> {
            if types.is_empty() {
                return Ok("()".to_string());
            }
            Ok(types
                .iter()
                .map(|t| vhlo_type(t))
                .collect::<Result<Vec<_>, _>>()?
                .join(", "))
        };
        // VHLO's type arrays print an empty list as `()`, inputs included.
        return Ok(format!(
            "!vhlo.func_v1<({}) -> {}>",
            list(&inputs)?,
            list(&outputs)?
        ));
    }
    Err(bad(format!("the type {ty} has no VHLO form oxla writes")))
}

/// `(a, b) -> c` or `(a) -> (b, c)`: its inputs and outputs.
fn function_type(ty: &str) -> Result<(Vec<String>, Vec<String>), VhloError> {
    let mut arrow = None;
    scan_top_level(ty, |i| {
        let found = ty[i..].starts_with("->");
        if found {
            arrow = Some(i);
        }
        found
    });
    let at = arrow.ok_or_else(|| bad(format!("{ty} is not a function type")))?;
    let unparen = |s: &str| -> Vec<String> {
        let s = s.trim();
        let inner = s
            .strip_prefix('(')
            .and_then(|t| t.strip_suffix(')'))
            .unwrap_or(s);
        split_top(inner).into_iter().map(str::to_string).collect()
    };
    Ok((unparen(&ty[..at]), unparen(&ty[at + 2..])))
}

/// Splits `#stablehlo.name<key = value, ...>` into its fields.
fn struct_fields<'t>(text: &'t str, name: &str) -> Result<Vec<(&'t str, &'t str)>, VhloError> {
    let body = text
        .strip_prefix(&format!("#stablehlo.{name}<"))
        .and_then(|t| t.strip_suffix('>'))
        .ok_or_else(|| bad(format!("expected #stablehlo.{name}<...>, got {text}")))?;
    let body = body.strip_prefix("raw ").unwrap_or(body);
    split_top(body)
        .into_iter()
        .map(|field| {
            field
                .split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| bad(format!("{text}: field {field} has no value")))
        })
        .collect()
}

/// `[1, 2]` as a VHLO i64 tensor.
fn i64_tensor_from_list(list: &str) -> String {
    let inner = list.trim().trim_start_matches('[').trim_end_matches(']');
    let values: Vec<&str> = split_top(inner);
    if values.is_empty() {
        "#vhlo.tensor_v1<dense<> : tensor<0xi64>>".to_string()
    } else {
        format!(
            "#vhlo.tensor_v1<dense<[{}]> : tensor<{}xi64>>",
            values.join(", "),
            values.len()
        )
    }
}

fn vhlo_i64(value: &str) -> String {
    format!("#vhlo.integer_v1<{} : i64>", value.trim())
}

fn vhlo_string(raw: &str) -> String {
    format!("#vhlo.string_v1<{raw}>")
}

/// The enum attributes StableHLO and VHLO share (`#stablehlo<name X>`).
const ENUMS: &[&str] = &[
    "comparison_direction",
    "comparison_type",
    "precision",
    "fft_type",
    "rng_algorithm",
    "rng_distribution",
    "transpose",
    "result_accuracy_mode",
];

/// Any attribute in VHLO form, as `convertGeneric` converts it.
pub(crate) fn vhlo_attribute(text: &str) -> Result<String, VhloError> {
    let t = text.trim();
    if t == "true" || t == "false" {
        return Ok(format!("#vhlo.bool_v1<{t}>"));
    }
    if t.starts_with('"') {
        return Ok(vhlo_string(t));
    }
    if let Some(symbol) = t.strip_prefix('@') {
        let quoted = if symbol.starts_with('"') {
            symbol.to_string()
        } else {
            format!("\"{symbol}\"")
        };
        return Ok(vhlo_string(&quoted));
    }
    if t.starts_with("dense<") {
        return Ok(format!("#vhlo.tensor_v1<{t}>"));
    }
    if let Some(body) = t.strip_prefix("array<").and_then(|b| b.strip_suffix('>')) {
        let (element, values) = body.split_once(':').unwrap_or((body, ""));
        let values = split_top(values);
        let element = element.trim();
        return Ok(if values.is_empty() {
            format!("#vhlo.tensor_v1<dense<> : tensor<0x{element}>>")
        } else {
            format!(
                "#vhlo.tensor_v1<dense<[{}]> : tensor<{}x{element}>>",
                values.join(", "),
                values.len()
            )
        });
    }
    if let Some(inner) = t.strip_prefix('[').and_then(|b| b.strip_suffix(']')) {
        let items = split_top(inner)
            .into_iter()
            .map(vhlo_attribute)
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(format!("#vhlo.array_v1<[{}]>", items.join(", ")));
    }
    if let Some(inner) = t.strip_prefix('{').and_then(|b| b.strip_suffix('}')) {
        let entries = split_top(inner)
            .into_iter()
            .map(|entry| {
                let (k, v) = entry.split_once('=').unwrap_or((entry, "unit"));
                let k = k.trim();
                let key = if k.starts_with('"') {
                    k.to_string()
                } else {
                    format!("\"{k}\"")
                };
                Ok(format!("{} = {}", vhlo_string(&key), vhlo_attribute(v)?))
            })
            .collect::<Result<Vec<_>, VhloError>>()?;
        return Ok(format!("#vhlo.dict_v1<{{{}}}>", entries.join(", ")));
    }
    if t.starts_with("#stablehlo.output_operand_alias<") {
        let fields = struct_fields(t, "output_operand_alias")?;
        let field = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| *v)
                .ok_or_else(|| bad(format!("{t} has no {name}")))
        };
        return Ok(format!(
            "#vhlo.output_operand_alias_v1<outputTupleIndices = {}, operandIndex = {}, \
             operandTupleIndices = {}>",
            field("output_tuple_indices")?,
            field("operand_index")?,
            field("operand_tuple_indices")?
        ));
    }
    if let Some(inner) = t
        .strip_prefix("#stablehlo<")
        .and_then(|b| b.strip_suffix('>'))
    {
        let (name, value) = inner
            .split_once(' ')
            .ok_or_else(|| bad(format!("the attribute {t} is not an enum")))?;
        if ENUMS.contains(&name) {
            return Ok(format!("#vhlo<{name}_v1 {}>", value.trim()));
        }
        return Err(bad(format!(
            "the attribute {t} has no VHLO form oxla writes"
        )));
    }
    if t.starts_with("#sdy") {
        // Shardy's attributes stay in their dialect (as with
        // `allow_other_dialects`).
        return Ok(t.to_string());
    }
    if let Some((value, ty)) = t.rsplit_once(" : ") {
        let ty = ty.trim();
        let value = value.trim();
        if ty.starts_with('i') || ty.starts_with("ui") || ty == "index" {
            return Ok(format!("#vhlo.integer_v1<{value} : {ty}>"));
        }
        if let Some(vty) = scalar(ty).filter(|_| ty.starts_with('f') || ty == "bf16") {
            return Ok(format!("#vhlo.float_v1<{value} : {vty}>"));
        }
    }
    if t.parse::<i64>().is_ok() {
        return Ok(vhlo_i64(t));
    }
    if t.starts_with('(') {
        return Ok(format!("#vhlo.type_v1<{}>", vhlo_type(t)?));
    }
    Err(bad(format!(
        "the attribute {t} has no VHLO form oxla writes"
    )))
}

/// The newest VHLO version of a StableHLO op (`add` → `add_v1`).
fn newest_vhlo_op(short: &str) -> Option<&'static str> {
    OP_ATTRIBUTES
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| {
            name.strip_prefix(short)
                .and_then(|rest| rest.strip_prefix("_v"))
                .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
        })
        .max_by_key(|name| {
            name.rsplit_once("_v")
                .map(|(_, n)| n.parse::<u32>().unwrap_or(0))
        })
}

/// `count` copies of `item` as a VHLO i64 tensor or a bool tensor.
fn filled(count: usize, item: &str, element: &str) -> String {
    if count == 0 {
        return format!("#vhlo.tensor_v1<dense<> : tensor<0x{element}>>");
    }
    format!(
        "#vhlo.tensor_v1<dense<[{}]> : tensor<{count}x{element}>>",
        vec![item; count].join(", ")
    )
}

/// The number of entries of a VHLO i64 tensor attribute.
fn tensor_len(attr: &str) -> usize {
    attr.split_once(": tensor<")
        .and_then(|(_, t)| t.split_once('x'))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or(0)
}

impl Legalizer {
    fn note(&mut self, vhlo_op: &str) {
        self.version = self.version.max(introduced(vhlo_op));
    }

    fn types(&self, types: &[String]) -> Result<Vec<String>, VhloError> {
        types.iter().map(|t| vhlo_type(t)).collect()
    }

    /// The op in VHLO form (several ops when casts surround it).
    fn op(&mut self, op: &Op) -> Result<Vec<Op>, VhloError> {
        let (dialect, short) = op
            .name
            .split_once('.')
            .ok_or_else(|| bad(format!("op name {} has no dialect", op.name)))?;
        match dialect {
            "builtin" if short == "module" => Ok(vec![Op {
                regions: self.regions(&op.regions)?,
                ..op.clone()
            }]),
            "func" => self.func_op(op, short).map(|o| vec![o]),
            "stablehlo" => self.stablehlo_op(op, short).map(|o| vec![o]),
            "sdy" | "chlo" => self.foreign_op(op),
            _ => Err(bad(format!(
                "{} has no StableHLO portable form (oxla writes StableHLO, func, CHLO and \
                 Shardy ops)",
                op.name
            ))),
        }
    }

    fn regions(&mut self, regions: &[Region]) -> Result<Vec<Region>, VhloError> {
        regions
            .iter()
            .map(|r| {
                Ok(Region {
                    blocks: r
                        .blocks
                        .iter()
                        .map(|b| {
                            Ok(Block {
                                arguments: b
                                    .arguments
                                    .iter()
                                    .map(|(n, t)| Ok((n.clone(), vhlo_type(t)?)))
                                    .collect::<Result<_, VhloError>>()?,
                                ops: b
                                    .ops
                                    .iter()
                                    .map(|o| self.op(o))
                                    .collect::<Result<Vec<_>, _>>()?
                                    .into_iter()
                                    .flatten()
                                    .collect(),
                            })
                        })
                        .collect::<Result<_, VhloError>>()?,
                })
            })
            .collect()
    }

    fn func_op(&mut self, op: &Op, short: &str) -> Result<Op, VhloError> {
        let all: Vec<(String, String)> = op
            .properties
            .iter()
            .chain(&op.attributes)
            .cloned()
            .collect();
        let get = |name: &str| all.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        let (name, properties) = match short {
            "func" => {
                let function_type =
                    get("function_type").ok_or_else(|| bad("a func.func without function_type"))?;
                let properties = vec![
                    (
                        "arg_attrs".to_string(),
                        vhlo_attribute(&get("arg_attrs").unwrap_or("[]".into()))?,
                    ),
                    (
                        "function_type".to_string(),
                        format!("#vhlo.type_v1<{}>", vhlo_type(&function_type)?),
                    ),
                    (
                        "res_attrs".to_string(),
                        vhlo_attribute(&get("res_attrs").unwrap_or("[]".into()))?,
                    ),
                    (
                        "sym_name".to_string(),
                        vhlo_attribute(
                            &get("sym_name").ok_or_else(|| bad("a func.func without sym_name"))?,
                        )?,
                    ),
                    (
                        "sym_visibility".to_string(),
                        vhlo_attribute(&get("sym_visibility").unwrap_or("\"\"".into()))?,
                    ),
                ];
                ("vhlo.func_v1", properties)
            }
            "return" => ("vhlo.return_v1", Vec::new()),
            "call" => (
                "vhlo.call_v1",
                vec![(
                    "callee".to_string(),
                    vhlo_attribute(
                        &get("callee").ok_or_else(|| bad("a func.call without callee"))?,
                    )?,
                )],
            ),
            other => return Err(bad(format!("func.{other} has no VHLO form"))),
        };
        self.note(name.trim_start_matches("vhlo."));
        let known = [
            "arg_attrs",
            "function_type",
            "res_attrs",
            "sym_name",
            "sym_visibility",
            "callee",
        ];
        let attributes = all
            .iter()
            .filter(|(n, _)| !known.contains(&n.as_str()))
            .map(|(n, v)| Ok((n.clone(), vhlo_attribute(v)?)))
            .collect::<Result<_, VhloError>>()?;
        self.vhlo_op(op, name.to_string(), properties, attributes)
    }

    /// `op` as the VHLO op `name` with these attributes: its regions and
    /// types converted, its values kept.
    fn vhlo_op(
        &mut self,
        op: &Op,
        name: String,
        properties: Vec<(String, String)>,
        attributes: Vec<(String, String)>,
    ) -> Result<Op, VhloError> {
        Ok(Op {
            name,
            results: op.results.clone(),
            operands: op.operands.clone(),
            properties,
            regions: self.regions(&op.regions)?,
            attributes,
            operand_types: self.types(&op.operand_types)?,
            result_types: self.types(&op.result_types)?,
        })
    }

    fn stablehlo_op(&mut self, op: &Op, short: &str) -> Result<Op, VhloError> {
        let tiled = op
            .properties
            .iter()
            .chain(&op.attributes)
            .any(|(name, _)| name == "result_tilings");
        // A custom call without result tilings is `custom_call_v1`, which
        // older StableHLO reads, as StableHLO's serializer downgrades it.
        let vhlo = if short == "custom_call" && !tiled {
            Some("custom_call_v1")
        } else {
            newest_vhlo_op(short)
        }
        .ok_or_else(|| bad(format!("stablehlo.{short} has no VHLO op oxla knows")))?;
        let inherent = op_attributes(vhlo).unwrap_or(&[]);
        let mut properties: Vec<(String, String)> = Vec::new();
        let mut attributes: Vec<(String, String)> = Vec::new();
        let mut set = |name: &str, value: String| properties.push((name.to_string(), value));
        for (name, value) in op.properties.iter().chain(&op.attributes) {
            match name.as_str() {
                "dot_dimension_numbers" => {
                    for (k, v) in struct_fields(value, "dot")? {
                        set(k, i64_tensor_from_list(v));
                    }
                }
                "dimension_numbers" if short == "gather" || short == "dynamic_gather" => {
                    for (k, v) in struct_fields(value, "gather")? {
                        if k == "index_vector_dim" {
                            set(k, vhlo_i64(v));
                        } else {
                            set(k, i64_tensor_from_list(v));
                        }
                    }
                }
                "scatter_dimension_numbers" => {
                    for (k, v) in struct_fields(value, "scatter")? {
                        if k == "index_vector_dim" {
                            set(k, vhlo_i64(v));
                        } else {
                            set(k, i64_tensor_from_list(v));
                        }
                    }
                }
                "dimension_numbers" if short == "convolution" => {
                    for (k, v) in struct_fields(value, "conv")? {
                        if k.ends_with("spatial_dimensions") {
                            set(k, i64_tensor_from_list(v));
                        } else {
                            set(k, vhlo_i64(v));
                        }
                    }
                }
                "channel_handle" => {
                    let handle = struct_fields(value, "channel_handle")?
                        .into_iter()
                        .find(|(k, _)| *k == "handle")
                        .map(|(_, v)| v)
                        .unwrap_or("0");
                    set("channel_id", vhlo_i64(handle));
                }
                // A custom call's API version: an enum in VHLO, a number
                // in StableHLO's generic form.
                "api_version" if short == "custom_call" => {
                    let version = value.split(':').next().unwrap_or("").trim();
                    let name = match version {
                        "0" => "API_VERSION_UNSPECIFIED",
                        "1" => "API_VERSION_ORIGINAL",
                        "2" => "API_VERSION_STATUS_RETURNING",
                        "3" => "API_VERSION_STATUS_RETURNING_UNIFIED",
                        "4" => "API_VERSION_TYPED_FFI",
                        other => {
                            return Err(bad(format!("custom call API version {other} is unknown")));
                        }
                    };
                    set("api_version", format!("#vhlo<api_version_v1 {name}>"));
                }
                "use_global_device_ids" if value == "unit" => {
                    set(name, "#vhlo.bool_v1<true>".to_string());
                }
                _ if inherent.contains(&name.as_str()) => set(name, vhlo_attribute(value)?),
                _ => attributes.push((name.clone(), vhlo_attribute(value)?)),
            }
        }
        for (name, value) in self.defaults(short, &properties) {
            if inherent.contains(&name.as_str()) && !properties.iter().any(|(n, _)| *n == name) {
                properties.push((name, value));
            }
        }
        if let Some(missing) = inherent
            .iter()
            .find(|n| !properties.iter().any(|(p, _)| p == *n))
        {
            return Err(bad(format!(
                "stablehlo.{short} lacks its attribute {missing}, which vhlo.{vhlo} needs"
            )));
        }
        properties.sort();
        self.note(vhlo);
        self.vhlo_op(op, format!("vhlo.{vhlo}"), properties, attributes)
    }

    /// The attributes StableHLO leaves out of an op and VHLO spells out
    /// (`addDefaults` of StableHLO's legalization).
    fn defaults(&self, short: &str, given: &[(String, String)]) -> Vec<(String, String)> {
        let get = |name: &str| {
            given
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let none = "#vhlo.type_v1<!vhlo.none_v1>";
        let precision =
            "#vhlo.array_v1<[#vhlo<precision_v1 DEFAULT>, #vhlo<precision_v1 DEFAULT>]>";
        let accuracy = "#vhlo.result_accuracy_v1<atol = 0.00000000000000000e0, \
                        rtol = 0.00000000000000000e0, ulps = 0, \
                        mode = #vhlo<result_accuracy_mode_v1 DEFAULT>>";
        let no = "#vhlo.bool_v1<false>";
        let zero = vhlo_i64("0");
        let empty = filled(0, "0", "i64");
        // `n` windowed dimensions: strides and dilations of 1, no padding.
        let ones = |n: usize| filled(n, "1", "i64");
        let no_padding = |n: usize| {
            if n == 0 {
                "#vhlo.tensor_v1<dense<> : tensor<0x2xi64>>".to_string()
            } else {
                format!("#vhlo.tensor_v1<dense<0> : tensor<{n}x2xi64>>")
            }
        };
        let window = |name: &str| get(name).map(tensor_len).unwrap_or(0);
        let pairs: Vec<(&str, String)> = match short {
            "all_gather" | "all_reduce" | "reduce_scatter" => {
                vec![("channel_id", zero), ("use_global_device_ids", no.into())]
            }
            "all_to_all" | "collective_permute" => vec![("channel_id", zero)],
            "cholesky" => vec![("lower", no.into())],
            // StableHLO's defaults for a custom call (oxla's LAPACK calls
            // name their target, version, config, layouts and, all but
            // `geev`, the operand their first result overwrites).
            "custom_call" => vec![
                ("called_computations", "#vhlo.array_v1<[]>".into()),
                ("has_side_effect", no.into()),
                ("output_operand_aliases", "#vhlo.array_v1<[]>".into()),
            ],
            "compare" => vec![("compare_type", "#vhlo<comparison_type_v1 NOTYPE>".into())],
            "convolution" => {
                let n = window("input_spatial_dimensions");
                vec![
                    ("window_strides", ones(n)),
                    ("padding", no_padding(n)),
                    ("lhs_dilation", ones(n)),
                    ("rhs_dilation", ones(n)),
                    ("window_reversal", filled(n, "false", "i1")),
                    ("precision_config", precision.into()),
                ]
            }
            "dot_general" | "dot" => [
                "lhs_precision_type",
                "rhs_precision_type",
                "accumulation_type",
                "lhs_component_count",
                "rhs_component_count",
                "num_primitive_operations",
                "allow_imprecise_accumulation",
            ]
            .into_iter()
            .map(|name| (name, none.to_string()))
            .chain([("precision_config", precision.to_string())])
            .collect(),
            "cbrt"
            | "cosine"
            | "exponential"
            | "exponential_minus_one"
            | "log"
            | "log_plus_one"
            | "logistic"
            | "rsqrt"
            | "sine"
            | "sqrt"
            | "tan"
            | "tanh" => {
                vec![("result_accuracy", accuracy.into())]
            }
            "gather" | "dynamic_gather" => vec![
                ("indices_are_sorted", no.into()),
                ("operand_batching_dims", empty.clone()),
                ("start_indices_batching_dims", empty),
            ],
            "scatter" => vec![
                ("indices_are_sorted", no.into()),
                ("unique_indices", no.into()),
                ("input_batching_dims", empty.clone()),
                ("scatter_indices_batching_dims", empty),
            ],
            "reduce_window" => {
                let n = window("window_dimensions");
                vec![
                    ("window_strides", ones(n)),
                    ("base_dilations", ones(n)),
                    ("window_dilations", ones(n)),
                    ("padding", no_padding(n)),
                ]
            }
            "select_and_scatter" => {
                let n = window("window_dimensions");
                vec![("window_strides", ones(n)), ("padding", no_padding(n))]
            }
            "sort" => vec![("dimension", vhlo_i64("-1")), ("is_stable", no.into())],
            _ => Vec::new(),
        };
        pairs
            .into_iter()
            .map(|(name, value)| (name.to_string(), value))
            .collect()
    }

    /// An op of another dialect: kept with builtin types, its VHLO
    /// operands cast to builtin types and its results cast back.
    fn foreign_op(&mut self, op: &Op) -> Result<Vec<Op>, VhloError> {
        let mut out = Vec::new();
        let operands = self.cast_to_builtin(&op.operands, &op.operand_types, &mut out)?;
        let mut regions = Vec::new();
        for region in &op.regions {
            let mut blocks = Vec::new();
            for block in &region.blocks {
                let mut ops = Vec::new();
                let mut arguments = Vec::new();
                // Block arguments arrive in builtin types; the ops inside
                // use them cast to VHLO types, under their original names.
                for (name, ty) in &block.arguments {
                    let builtin_name = format!("{name}_builtin");
                    ops.push(self.cast(&builtin_name, ty, &vhlo_type(ty)?, Some(name)));
                    arguments.push((builtin_name, ty.clone()));
                }
                for inner in &block.ops {
                    if inner.name.starts_with("sdy.")
                        && inner.regions.is_empty()
                        && inner.results.is_empty()
                    {
                        // A terminator: its operands go back to builtin types.
                        let operands =
                            self.cast_to_builtin(&inner.operands, &inner.operand_types, &mut ops)?;
                        ops.push(Op {
                            operands,
                            ..inner.clone()
                        });
                    } else {
                        ops.extend(self.op(inner)?);
                    }
                }
                blocks.push(Block { arguments, ops });
            }
            regions.push(Region { blocks });
        }
        let results: Vec<String> = op.results.iter().map(|r| format!("{r}_builtin")).collect();
        out.push(Op {
            operands,
            regions,
            results: results.clone(),
            ..op.clone()
        });
        for ((builtin, original), ty) in results.iter().zip(&op.results).zip(&op.result_types) {
            out.push(self.cast(builtin, ty, &vhlo_type(ty)?, Some(original)));
        }
        Ok(out)
    }

    /// `values` (of builtin `types`, held in VHLO types) cast to their
    /// builtin types by casts appended to `out`: the casts' results.
    fn cast_to_builtin(
        &mut self,
        values: &[String],
        types: &[String],
        out: &mut Vec<Op>,
    ) -> Result<Vec<String>, VhloError> {
        let mut cast_values = Vec::with_capacity(values.len());
        for (value, ty) in values.iter().zip(types) {
            let cast = self.cast(value, &vhlo_type(ty)?, ty, None);
            cast_values.push(cast.results[0].clone());
            out.push(cast);
        }
        Ok(cast_values)
    }

    /// An `unrealized_conversion_cast` of `value` from `from` to `to`, its
    /// result named `result` (a fresh name when `None`).
    fn cast(&mut self, value: &str, from: &str, to: &str, result: Option<&String>) -> Op {
        self.casts += 1;
        Op {
            name: "builtin.unrealized_conversion_cast".to_string(),
            results: vec![
                result
                    .cloned()
                    .unwrap_or_else(|| format!("%oxla_cast{}", self.casts)),
            ],
            operands: vec![value.to_string()],
            properties: Vec::new(),
            regions: Vec::new(),
            attributes: Vec::new(),
            operand_types: vec![from.to_string()],
            result_types: vec![to.to_string()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_become_vhlo_types() {
        assert_eq!(
            vhlo_type("tensor<2x3xf32>").unwrap(),
            "!vhlo.tensor_v1<2x3x!vhlo.f32_v1>"
        );
        assert_eq!(
            vhlo_type("tensor<i1>").unwrap(),
            "!vhlo.tensor_v1<!vhlo.bool_v1>"
        );
        assert_eq!(
            vhlo_type("(tensor<f32>, tensor<2xui8>) -> (tensor<f32>, tensor<i64>)").unwrap(),
            "!vhlo.func_v1<(!vhlo.tensor_v1<!vhlo.f32_v1>, !vhlo.tensor_v1<2x!vhlo.ui8_v1>) -> \
             !vhlo.tensor_v1<!vhlo.f32_v1>, !vhlo.tensor_v1<!vhlo.i64_v1>>"
        );
        assert_eq!(vhlo_type("() -> ()").unwrap(), "!vhlo.func_v1<(()) -> ()>");
        assert!(vhlo_type("memref<2xf32>").is_err());
    }

    #[test]
    fn attributes_become_vhlo_attributes() {
        let cases = [
            (
                "array<i64: 1, 2>",
                "#vhlo.tensor_v1<dense<[1, 2]> : tensor<2xi64>>",
            ),
            ("array<i64>", "#vhlo.tensor_v1<dense<> : tensor<0xi64>>"),
            ("3 : i64", "#vhlo.integer_v1<3 : i64>"),
            ("1.5 : f32", "#vhlo.float_v1<1.5 : !vhlo.f32_v1>"),
            ("true", "#vhlo.bool_v1<true>"),
            ("\"a\"", "#vhlo.string_v1<\"a\">"),
            ("@f", "#vhlo.string_v1<\"f\">"),
            (
                "#stablehlo<comparison_direction GE>",
                "#vhlo<comparison_direction_v1 GE>",
            ),
            (
                "[{}, {jax.result_info = \"r\"}]",
                "#vhlo.array_v1<[#vhlo.dict_v1<{}>, #vhlo.dict_v1<{#vhlo.string_v1<\"jax.result_info\"> = #vhlo.string_v1<\"r\">}>]>",
            ),
        ];
        for (from, to) in cases {
            assert_eq!(vhlo_attribute(from).unwrap(), to, "{from}");
        }
        assert!(vhlo_attribute("#stablehlo<unknown X>").is_err());
        assert_eq!(
            vhlo_attribute(
                "[#stablehlo.output_operand_alias<output_tuple_indices = [0], \
                 operand_index = 1, operand_tuple_indices = []>]"
            )
            .unwrap(),
            "#vhlo.array_v1<[#vhlo.output_operand_alias_v1<outputTupleIndices = [0], \
             operandIndex = 1, operandTupleIndices = []>]>"
        );
    }

    #[test]
    fn newest_versions_are_chosen() {
        assert_eq!(newest_vhlo_op("tanh"), Some("tanh_v2"));
        assert_eq!(newest_vhlo_op("add"), Some("add_v1"));
        assert_eq!(newest_vhlo_op("dot_general"), Some("dot_general_v2"));
        assert_eq!(newest_vhlo_op("dot"), Some("dot_v1"));
        assert_eq!(newest_vhlo_op("nonexistent"), None);
    }
}
