//! Shape refinement of shape-polymorphic exports, as JAX's
//! `refine_polymorphic_shapes` does with StableHLO's passes, on oxla's own
//! op tree: `main`'s dynamic (`?`) argument dims become the concrete
//! inputs' dims, and the shapes flow through every function the module
//! calls. The small integer computations on dimension sizes are folded
//! ([`fold`]), which turns the dynamic ops they feed
//! (`dynamic_broadcast_in_dim`, `dynamic_reshape`, `dynamic_iota`,
//! `dynamic_pad`, `real_dynamic_slice`) into their static forms; each
//! other op gets its result dims by its shape rule ([`shapes`]). JAX's
//! `shape_assertion` calls are checked and removed: a violated one is an
//! error with JAX's message. A function called with different shapes is
//! specialized once per distinct call.

mod fold;
mod shapes;
mod types;

use std::collections::HashMap;

use fold::Constant;
use shapes::property;
use types::{TensorType, dense_integers, i64_list_attribute, integer_attribute};

use super::VhloError;
use super::text::{self, Op};

fn bad(what: impl Into<String>) -> VhloError {
    VhloError(what.into())
}

/// A refined module: the portable artifact and the dims of `main`'s results.
#[derive(Debug, Clone)]
pub struct RefinedModule {
    /// The module as a portable artifact.
    pub artifact: Vec<u8>,
    /// The dims of each of `main`'s results (empty for a token).
    pub result_dims: Vec<Vec<i64>>,
}

/// `artifact` (a portable artifact) with `main`'s arguments given the
/// concrete `argument_dims` (one list per argument, in order) and every
/// shape of the module refined from them, written as a portable artifact
/// for StableHLO `version` (`"1.10.0"`). Fails when an argument's rank or a
/// static dim differs, when a shape assertion of the export does not hold
/// (with JAX's message), or when a dynamic shape cannot be refined (naming
/// the op).
pub fn refine_shapes(
    artifact: &[u8],
    argument_dims: &[Vec<i64>],
    version: &str,
) -> Result<RefinedModule, VhloError> {
    let text = super::artifact_to_text(artifact)?;
    let mut ops = text::parse(&text)?;
    let module_ops = module_body(&mut ops)?;
    let mut originals = HashMap::new();
    let mut first_function = None;
    let mut kept = Vec::new();
    for (i, op) in std::mem::take(module_ops).into_iter().enumerate() {
        if op.name == "vhlo.func_v1" {
            first_function.get_or_insert(i);
            originals.insert(function_name(&op)?, op);
        } else {
            kept.push(op);
        }
    }
    let main = originals
        .get("main")
        .ok_or_else(|| bad("the module has no function `main`"))?;
    let arguments = entry_arguments(main)?;
    if arguments.len() != argument_dims.len() {
        return Err(bad(format!(
            "`main` takes {} arguments, {} shapes given",
            arguments.len(),
            argument_dims.len()
        )));
    }
    let mut types = Vec::with_capacity(arguments.len());
    for (i, ((_, ty), dims)) in arguments.iter().zip(argument_dims).enumerate() {
        types.push(concrete_argument(i, ty, dims)?);
    }
    let mut refiner = Refiner {
        originals,
        specialized: Vec::new(),
        memo: HashMap::new(),
        uses: HashMap::new(),
        in_progress: Vec::new(),
        failed_assertion: None,
        inlined: 0,
    };
    let consts = vec![None; types.len()];
    let main = match refiner.specialize("main", types, consts) {
        Ok(main) => main,
        Err(e) => return Err(refiner.failed_assertion.take().map_or(e, bad)),
    };
    let result_dims = main
        .result_types
        .iter()
        .map(|t| {
            TensorType::parse(t)
                .and_then(|t| t.static_dims())
                .unwrap_or_default()
        })
        .collect();
    // Functions no refined op calls stay as exported when their types are
    // static (a custom call may name one); dynamic ones are dropped.
    let mut functions = refiner.specialized;
    let mut unused: Vec<(String, Op)> = refiner
        .originals
        .into_iter()
        .filter(|(name, _)| !refiner.uses.contains_key(name))
        .filter(|(_, f)| property(f, "function_type").is_some_and(|t| !has_dynamic_dims(t)))
        .collect();
    unused.sort_by(|a, b| a.0.cmp(&b.0));
    functions.extend(unused.into_iter().map(|(_, f)| f));
    let at = first_function.unwrap_or(kept.len()).min(kept.len());
    let mut body = kept;
    body.splice(at..at, functions);
    *module_body(&mut ops)? = body;
    let artifact = super::writer::write(&ops, &format!("StableHLO_v{version}"))?;
    Ok(RefinedModule {
        artifact,
        result_dims,
    })
}

/// Whether a type's text has a dynamic (`?`) tensor dim.
fn has_dynamic_dims(text: &str) -> bool {
    text.contains("<?x") || text.contains("x?x")
}

/// The ops of the module's body (the top level when there is no module).
fn module_body(ops: &mut Vec<Op>) -> Result<&mut Vec<Op>, VhloError> {
    let index = ops.iter().position(|op| op.name == "builtin.module");
    match index {
        Some(i) => ops[i]
            .regions
            .first_mut()
            .and_then(|r| r.blocks.first_mut())
            .map(|b| &mut b.ops)
            .ok_or_else(|| bad("the module has no body")),
        None => Ok(ops),
    }
}

/// The text of a `#vhlo.string_v1<"...">` attribute.
fn string_attribute(attribute: &str) -> Option<String> {
    let inner = attribute
        .trim()
        .strip_prefix("#vhlo.string_v1<\"")?
        .strip_suffix("\">")?;
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            h if h.is_ascii_hexdigit() => {
                let l = chars.next()?;
                let byte = u8::from_str_radix(&format!("{h}{l}"), 16).ok()?;
                out.push(char::from(byte));
            }
            other => out.push(other),
        }
    }
    Some(out)
}

fn function_name(op: &Op) -> Result<String, VhloError> {
    property(op, "sym_name")
        .and_then(string_attribute)
        .ok_or_else(|| bad("a function without a name"))
}

fn entry_arguments(function: &Op) -> Result<&Vec<(String, String)>, VhloError> {
    function
        .regions
        .first()
        .and_then(|r| r.blocks.first())
        .map(|b| &b.arguments)
        .ok_or_else(|| bad("a function without a body"))
}

/// Argument `i`'s type `ty` with the concrete `dims`, checked against its
/// rank and static dims.
fn concrete_argument(i: usize, ty: &str, dims: &[i64]) -> Result<String, VhloError> {
    let Some(tensor) = TensorType::parse(ty) else {
        return Ok(ty.to_string());
    };
    let fits = tensor.dims.len() == dims.len()
        && tensor
            .dims
            .iter()
            .zip(dims)
            .all(|(want, &got)| got >= 0 && want.is_none_or(|w| w == got));
    if !fits {
        let got: Vec<String> = dims.iter().map(i64::to_string).collect();
        return Err(bad(format!(
            "argument {i} of `main` is {ty}, which an input of dims [{}] does not fit",
            got.join(", ")
        )));
    }
    Ok(tensor.with_dims(dims).text())
}

/// What is known of a value: its (refined) type and, for a small integer
/// value the shape computations produce, its elements.
#[derive(Debug, Clone)]
struct Known {
    ty: String,
    constant: Option<Constant>,
}

/// A specialized function: its name and results.
#[derive(Debug, Clone)]
struct Specialization {
    name: String,
    result_types: Vec<String>,
    result_constants: Vec<Option<Constant>>,
}

struct Refiner {
    /// The module's functions as exported, by name.
    originals: HashMap<String, Op>,
    /// The refined functions, in the order they were made.
    specialized: Vec<Op>,
    /// Specializations by function, argument types and known arguments.
    memo: HashMap<String, Specialization>,
    /// How many specializations each function has.
    uses: HashMap<String, usize>,
    /// The functions being refined (a recursive call is refused).
    in_progress: Vec<String>,
    /// The message of a shape assertion that does not hold: the error the
    /// caller sees, without the functions and ops it was found in.
    failed_assertion: Option<String>,
    /// How many function bodies were inlined as regions (each renamed).
    inlined: usize,
}

/// An op's name without `vhlo.` and its version (`dot_general`).
fn short_name(name: &str) -> &str {
    let name = name.strip_prefix("vhlo.").unwrap_or(name);
    match name.rsplit_once("_v") {
        Some((short, version)) if version.chars().all(|c| c.is_ascii_digit()) => short,
        _ => name,
    }
}

impl Refiner {
    /// Turns JAX's `stablehlo.dynamic_reduce_window` custom call (inputs,
    /// initial values, then window dimensions, strides, base and window
    /// dilations and padding as operands; its reducer a called function)
    /// into `reduce_window` with those operands' known values as attributes
    /// and the reducer's body as its region, as StableHLO's refinement does.
    fn static_reduce_window(
        &mut self,
        op: &mut Op,
        constant: &dyn Fn(usize) -> Option<Constant>,
    ) -> Result<(), VhloError> {
        let n = op
            .operands
            .len()
            .checked_sub(5)
            .filter(|k| k % 2 == 0)
            .map(|k| k / 2)
            .ok_or_else(|| bad("dynamic_reduce_window takes 2n + 5 operands"))?;
        let window = shape_operand(op, 2 * n, constant)?;
        let strides = shape_operand(op, 2 * n + 1, constant)?;
        let base = shape_operand(op, 2 * n + 2, constant)?;
        let dilations = shape_operand(op, 2 * n + 3, constant)?;
        let padding = shape_operand(op, 2 * n + 4, constant)?;
        let reducer = property(op, "called_computations")
            .and_then(|c| c.split('"').nth(1))
            .ok_or_else(|| bad("dynamic_reduce_window names no reducer"))?
            .to_string();
        let mut body = self
            .originals
            .get(&reducer)
            .and_then(|f| f.regions.first().cloned())
            .ok_or_else(|| bad(format!("the reducer {reducer} is not in the module")))?;
        self.inlined += 1;
        rename_values(&mut body, &format!("_r{}", self.inlined));
        let i64_type = types::integer_type("!vhlo.i64_v1").ok_or_else(|| bad("no i64 type"))?;
        let rank = window.len() as i64;
        op.name = "vhlo.reduce_window_v1".into();
        op.properties = vec![
            ("base_dilations".into(), i64_list_attribute(&base)),
            (
                "padding".into(),
                types::dense_attribute(&padding, &[rank, 2], i64_type),
            ),
            ("window_dilations".into(), i64_list_attribute(&dilations)),
            ("window_dimensions".into(), i64_list_attribute(&window)),
            ("window_strides".into(), i64_list_attribute(&strides)),
        ];
        op.attributes.clear();
        op.operands.truncate(2 * n);
        op.operand_types.truncate(2 * n);
        op.regions = vec![body];
        Ok(())
    }

    /// Refines the blocks of `op`'s regions, their arguments given
    /// `argument_types` when set (kept otherwise); returns what the first
    /// block returns.
    fn refine_regions(
        &mut self,
        op: &mut Op,
        env: &mut HashMap<String, Known>,
        argument_types: Option<&[String]>,
    ) -> Result<Option<Vec<Known>>, VhloError> {
        let mut first = None;
        for region in &mut op.regions {
            for block in &mut region.blocks {
                for (i, (name, ty)) in block.arguments.iter_mut().enumerate() {
                    if let Some(t) = argument_types.and_then(|types| types.get(i)) {
                        ty.clone_from(t);
                    }
                    let known = Known {
                        ty: ty.clone(),
                        constant: None,
                    };
                    env.insert(name.clone(), known);
                }
                let returned = self.refine_ops(&mut block.ops, env)?;
                first.get_or_insert(returned);
            }
        }
        Ok(first)
    }

    fn specialize(
        &mut self,
        name: &str,
        argument_types: Vec<String>,
        argument_constants: Vec<Option<Constant>>,
    ) -> Result<Specialization, VhloError> {
        let key = format!("{name}|{argument_types:?}|{argument_constants:?}");
        if let Some(done) = self.memo.get(&key) {
            return Ok(done.clone());
        }
        if self.in_progress.iter().any(|n| n == name) {
            return Err(bad(format!(
                "the function {name} calls itself, which shape refinement does not follow"
            )));
        }
        let mut function = self
            .originals
            .get(name)
            .cloned()
            .ok_or_else(|| bad(format!("a call of the unknown function {name}")))?;
        let count = self.uses.entry(name.to_string()).or_insert(0);
        let new_name = if *count == 0 {
            name.to_string()
        } else {
            format!("{name}_{count}")
        };
        *count += 1;
        self.in_progress.push(name.to_string());
        let mut env = HashMap::new();
        let block = function
            .regions
            .first_mut()
            .and_then(|r| r.blocks.first_mut())
            .ok_or_else(|| bad(format!("the function {name} has no body")))?;
        if block.arguments.len() != argument_types.len() {
            return Err(bad(format!(
                "the function {name} takes {} arguments, called with {}",
                block.arguments.len(),
                argument_types.len()
            )));
        }
        for ((arg, ty), constant) in block
            .arguments
            .iter_mut()
            .zip(&argument_types)
            .zip(argument_constants)
        {
            arg.1.clone_from(ty);
            env.insert(
                arg.0.clone(),
                Known {
                    ty: ty.clone(),
                    constant,
                },
            );
        }
        let returned = self
            .refine_ops(&mut block.ops, &mut env)
            .map_err(|e| bad(format!("in function {name}: {e}")))?;
        self.in_progress.pop();
        let (result_types, result_constants): (Vec<String>, Vec<Option<Constant>>) =
            returned.into_iter().map(|k| (k.ty, k.constant)).unzip();
        set_property(
            &mut function,
            "function_type",
            function_type(&argument_types, &result_types),
        );
        set_property(
            &mut function,
            "sym_name",
            format!("#vhlo.string_v1<\"{new_name}\">"),
        );
        let done = Specialization {
            name: new_name,
            result_types,
            result_constants,
        };
        self.specialized.push(function);
        self.memo.insert(key, done.clone());
        Ok(done)
    }

    /// Refines a block's ops in order; returns what its terminator returns.
    fn refine_ops(
        &mut self,
        ops: &mut Vec<Op>,
        env: &mut HashMap<String, Known>,
    ) -> Result<Vec<Known>, VhloError> {
        let mut returned = Vec::new();
        let mut i = 0;
        while i < ops.len() {
            let op = &mut ops[i];
            for (operand, ty) in op.operands.iter().zip(op.operand_types.iter_mut()) {
                if let Some(known) = env.get(operand) {
                    ty.clone_from(&known.ty);
                }
            }
            if op.name == "vhlo.return_v1" {
                returned = op
                    .operands
                    .iter()
                    .map(|o| env.get(o).cloned())
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad("a return of an unknown value"))?;
            }
            let keep = self.refine_op(op, env).map_err(|e| {
                if is_shape_assertion(op) {
                    // JAX's own message says what does not hold.
                    e
                } else if op.results.is_empty() {
                    bad(format!("{}: {e}", op.name))
                } else {
                    bad(format!(
                        "{} (result {}): {e}",
                        op.name,
                        op.results.join(", ")
                    ))
                }
            })?;
            if keep {
                i += 1;
            } else {
                ops.remove(i);
            }
        }
        Ok(returned)
    }

    /// Refines one op whose operand types are refined; returns whether it
    /// stays (a checked shape assertion goes).
    fn refine_op(
        &mut self,
        op: &mut Op,
        env: &mut HashMap<String, Known>,
    ) -> Result<bool, VhloError> {
        let operands: Vec<Option<Known>> =
            op.operands.iter().map(|o| env.get(o).cloned()).collect();
        let constant = |i: usize| operands.get(i).and_then(|k| k.as_ref()?.constant.clone());
        if custom_call_target(op).as_deref() == Some("stablehlo.dynamic_reduce_window") {
            self.static_reduce_window(op, &constant)?;
        }
        let short = short_name(&op.name).to_string();
        let mut constants: Vec<Option<Constant>> = vec![None; op.results.len()];
        match short.as_str() {
            "custom_call" if is_shape_assertion(op) => {
                if let Err(e) = check_assertion(op, &operands) {
                    self.failed_assertion.get_or_insert_with(|| e.0.clone());
                    return Err(e);
                }
                return Ok(false);
            }
            // A composite's decomposition is a function called with its
            // operands, refined as a call is.
            "call" | "composite" => {
                let attribute = if short == "call" {
                    "callee"
                } else {
                    "decomposition"
                };
                let callee = property(op, attribute)
                    .and_then(string_attribute)
                    .ok_or_else(|| bad(format!("no {attribute}")))?;
                let consts = (0..op.operands.len()).map(constant).collect();
                let done = self.specialize(&callee, op.operand_types.clone(), consts)?;
                set_property(op, attribute, format!("#vhlo.string_v1<\"{}\">", done.name));
                op.result_types.clone_from(&done.result_types);
                constants = done.result_constants;
            }
            "while" => {
                // The loop carries values of its operands' types.
                let carried = op.operand_types.clone();
                self.refine_regions(op, env, Some(&carried))?;
                op.result_types = carried;
            }
            "if" | "case" => {
                if let Some(returned) = self.refine_regions(op, env, None)? {
                    op.result_types = returned.into_iter().map(|k| k.ty).collect();
                }
            }
            _ => {
                self.refine_regions(op, env, None)?;
                rewrite_dynamic(op, &short, &constant)?;
                refine_results(op, &operands)?;
                constants = fold_op(op, &operands)?;
            }
        }
        for ((name, ty), constant) in op.results.iter().zip(&op.result_types).zip(constants) {
            env.insert(
                name.clone(),
                Known {
                    ty: ty.clone(),
                    constant,
                },
            );
        }
        Ok(true)
    }
}

/// The target of a custom call.
fn custom_call_target(op: &Op) -> Option<String> {
    if short_name(&op.name) != "custom_call" {
        return None;
    }
    property(op, "call_target_name").and_then(string_attribute)
}

/// Whether `op` is JAX's `shape_assertion` custom call.
fn is_shape_assertion(op: &Op) -> bool {
    custom_call_target(op).as_deref() == Some("shape_assertion")
}

/// `region` with each value name given the suffix `suffix`, so a function
/// body inlined as a region defines no name twice.
fn rename_values(region: &mut text::Region, suffix: &str) {
    for block in &mut region.blocks {
        for (name, _) in &mut block.arguments {
            name.push_str(suffix);
        }
        for op in &mut block.ops {
            for name in op.results.iter_mut().chain(op.operands.iter_mut()) {
                // A pack member `%8#0` keeps its index after the suffix.
                match name.split_once('#') {
                    Some((base, index)) => *name = format!("{base}{suffix}#{index}"),
                    None => name.push_str(suffix),
                }
            }
            for inner in &mut op.regions {
                rename_values(inner, suffix);
            }
        }
    }
}

fn set_property(op: &mut Op, name: &str, value: String) {
    match op.properties.iter_mut().find(|(n, _)| n == name) {
        Some(entry) => entry.1 = value,
        None => op.properties.push((name.to_string(), value)),
    }
}

/// A function's type attribute, as VHLO prints it.
fn function_type(inputs: &[String], outputs: &[String]) -> String {
    let outputs = if outputs.is_empty() {
        "()".to_string()
    } else {
        outputs.join(", ")
    };
    format!(
        "#vhlo.type_v1<!vhlo.func_v1<({}) -> {outputs}>>",
        inputs.join(", ")
    )
}

/// Checks a JAX `shape_assertion(pred, values...)`: its predicate must be
/// known and true; a false one fails with its error message, `{i}`
/// replaced by value `i`.
fn check_assertion(op: &Op, operands: &[Option<Known>]) -> Result<(), VhloError> {
    let message = op
        .attributes
        .iter()
        .find(|(n, _)| n.trim_matches('"') == "error_message")
        .and_then(|(_, v)| string_attribute(v))
        .unwrap_or_else(|| "a shape assertion of the export does not hold".to_string());
    let value = |k: &Option<Known>| k.as_ref()?.constant.clone();
    let predicate = operands.first().and_then(value).ok_or_else(|| {
        bad(format!(
            "a shape assertion whose condition is not known: {message}"
        ))
    })?;
    if predicate.values.iter().all(|&v| v != 0) {
        return Ok(());
    }
    let mut text = message;
    for (i, operand) in operands.iter().skip(1).enumerate() {
        if let Some(c) = value(operand)
            && let Some(v) = c.values.first()
        {
            text = text.replace(&format!("{{{i}}}"), &v.to_string());
        }
    }
    Err(bad(text))
}

/// The known integer list of operand `i`, for a dynamic op's shape.
fn shape_operand(
    op: &Op,
    i: usize,
    constant: &dyn Fn(usize) -> Option<Constant>,
) -> Result<Vec<i64>, VhloError> {
    constant(i).map(|c| c.values).ok_or_else(|| {
        bad(format!(
            "operand {i} ({}) is computed from values other than the inputs' shapes, so the \
             shape it gives is not known",
            op.operands.get(i).map_or("?", String::as_str)
        ))
    })
}

/// Replaces a dynamic op whose shape operands are known by its static form.
fn rewrite_dynamic(
    op: &mut Op,
    short: &str,
    constant: &dyn Fn(usize) -> Option<Constant>,
) -> Result<(), VhloError> {
    let static_result = |op: &mut Op, dims: &[i64]| -> Result<(), VhloError> {
        let ty = op
            .result_types
            .first()
            .and_then(|t| TensorType::parse(t))
            .ok_or_else(|| bad("a dynamic op without a tensor result"))?;
        op.result_types = vec![ty.with_dims(dims).text()];
        Ok(())
    };
    let keep_first_operands = |op: &mut Op, n: usize| {
        op.operands.truncate(n);
        op.operand_types.truncate(n);
    };
    match short {
        "dynamic_broadcast_in_dim" => {
            let dims = shape_operand(op, 1, constant)?;
            let mapping = property(op, "broadcast_dimensions")
                .ok_or_else(|| bad("no broadcast_dimensions"))?
                .to_string();
            op.name = "vhlo.broadcast_in_dim_v1".into();
            op.properties = vec![("broadcast_dimensions".into(), mapping)];
            keep_first_operands(op, 1);
            static_result(op, &dims)
        }
        "dynamic_reshape" => {
            let dims = shape_operand(op, 1, constant)?;
            op.name = "vhlo.reshape_v1".into();
            op.properties.clear();
            keep_first_operands(op, 1);
            static_result(op, &dims)
        }
        "dynamic_iota" => {
            let dims = shape_operand(op, 0, constant)?;
            op.name = "vhlo.iota_v1".into();
            keep_first_operands(op, 0);
            static_result(op, &dims)
        }
        "dynamic_pad" => {
            let lo = shape_operand(op, 2, constant)?;
            let hi = shape_operand(op, 3, constant)?;
            let interior = shape_operand(op, 4, constant)?;
            let x = op
                .operand_types
                .first()
                .and_then(|t| TensorType::parse(t)?.static_dims())
                .ok_or_else(|| bad("the padded operand's shape is not known"))?;
            if [lo.len(), hi.len(), interior.len()] != [x.len(); 3] {
                return Err(bad(
                    "dynamic_pad's paddings do not match its operand's rank",
                ));
            }
            let dims = shapes::padded(&x, &lo, &hi, &interior);
            op.name = "vhlo.pad_v1".into();
            op.properties = vec![
                ("edge_padding_high".into(), i64_list_attribute(&hi)),
                ("edge_padding_low".into(), i64_list_attribute(&lo)),
                ("interior_padding".into(), i64_list_attribute(&interior)),
            ];
            keep_first_operands(op, 2);
            static_result(op, &dims)
        }
        "dynamic_gather" => {
            let sizes = shape_operand(op, 2, constant)?;
            op.name = op.name.replace("dynamic_gather", "gather");
            op.properties
                .push(("slice_sizes".into(), i64_list_attribute(&sizes)));
            keep_first_operands(op, 2);
            Ok(())
        }
        "real_dynamic_slice" => {
            let start = shape_operand(op, 1, constant)?;
            let limit = shape_operand(op, 2, constant)?;
            let strides = shape_operand(op, 3, constant)?;
            if limit.len() != start.len() || strides.len() != start.len() {
                return Err(bad("real_dynamic_slice's bounds differ in length"));
            }
            let dims: Vec<i64> = (0..start.len())
                .map(|d| shapes::strided_count(start[d], limit[d], strides[d]))
                .collect();
            op.name = "vhlo.slice_v1".into();
            op.properties = vec![
                ("limit_indices".into(), i64_list_attribute(&limit)),
                ("start_indices".into(), i64_list_attribute(&start)),
                ("strides".into(), i64_list_attribute(&strides)),
            ];
            keep_first_operands(op, 1);
            static_result(op, &dims)
        }
        _ => Ok(()),
    }
}

/// Gives an op with dynamic results the dims of its shape rule.
fn refine_results(op: &mut Op, operands: &[Option<Known>]) -> Result<(), VhloError> {
    let results: Vec<Option<TensorType>> = op
        .result_types
        .iter()
        .map(|t| TensorType::parse(t))
        .collect();
    let dynamic = results
        .iter()
        .any(|r| r.as_ref().is_some_and(|t| t.static_dims().is_none()));
    if !dynamic {
        return Ok(());
    }
    let operand_dims: Vec<Vec<i64>> = operands
        .iter()
        .map(|k| {
            k.as_ref()
                .and_then(|k| TensorType::parse(&k.ty)?.static_dims())
                .unwrap_or_default()
        })
        .collect();
    let ranks: Vec<usize> = results
        .iter()
        .map(|r| r.as_ref().map_or(0, |t| t.dims.len()))
        .collect();
    let short = short_name(&op.name).to_string();
    let dims = shapes::result_dims(&short, op, &operand_dims, &ranks)?.ok_or_else(|| {
        bad(format!(
            "its result type {} is dynamic and oxla has no shape rule to refine it",
            op.result_types.join(", ")
        ))
    })?;
    for ((ty, result), dims) in op.result_types.iter_mut().zip(&results).zip(dims) {
        if let Some(t) = result {
            if dims.len() != t.dims.len() {
                return Err(bad(format!(
                    "its shape rule gives rank {} for the result {ty}",
                    dims.len()
                )));
            }
            *ty = t.with_dims(&dims).text();
        }
    }
    Ok(())
}

/// The values of an op's integer results, when its operands' are known
/// and small: the shape computations of a polymorphic module.
fn fold_op(op: &Op, operands: &[Option<Known>]) -> Result<Vec<Option<Constant>>, VhloError> {
    let none = vec![None; op.results.len()];
    let Some(result) = op.result_types.first().and_then(|t| TensorType::parse(t)) else {
        return Ok(none);
    };
    let (Some(ty), Some(dims)) = (result.integer_element(), result.static_dims()) else {
        return Ok(none);
    };
    let c = |i: usize| operands.get(i).and_then(|k| k.as_ref()?.constant.as_ref());
    let operand_type = |i: usize| {
        operands
            .get(i)
            .and_then(|k| TensorType::parse(&k.as_ref()?.ty))
    };
    let count = dims
        .iter()
        .try_fold(1i64, |acc, &d| acc.checked_mul(d.max(0)))
        .filter(|&n| n <= fold::MAX_FOLDED_ELEMENTS as i64);
    let Some(count) = count else {
        return Ok(none);
    };
    let short = short_name(&op.name);
    let folded = match short {
        "constant" => {
            let value = property(op, "value").ok_or_else(|| bad("a constant without a value"))?;
            Some(Constant {
                values: dense_integers(value, ty, count as usize)?,
                dims: dims.clone(),
            })
        }
        "get_dimension_size" => {
            let axis = integer_attribute(property(op, "dimension").unwrap_or(""))?;
            operand_type(0)
                .and_then(|t| t.dims.get(usize::try_from(axis).ok()?).copied().flatten())
                .map(Constant::scalar)
        }
        "iota" => {
            let axis = integer_attribute(property(op, "iota_dimension").unwrap_or(""))?;
            fold::iota(&dims, usize::try_from(axis).unwrap_or(0))
        }
        "convert" | "reshape" => c(0).and_then(|x| fold::reshape(x, &dims, ty)),
        "broadcast_in_dim" => {
            let mapping = types::integer_list(property(op, "broadcast_dimensions").unwrap_or(""))?;
            c(0).and_then(|x| fold::broadcast(x, &mapping, &dims))
        }
        "concatenate" => {
            let axis = integer_attribute(property(op, "dimension").unwrap_or(""))?;
            let parts: Option<Vec<&Constant>> = (0..op.operands.len()).map(c).collect();
            parts.and_then(|p| fold::concatenate(&p, usize::try_from(axis).ok()?, &dims))
        }
        "slice" => {
            let starts = types::integer_list(property(op, "start_indices").unwrap_or(""))?;
            let strides = types::integer_list(property(op, "strides").unwrap_or(""))?;
            c(0).and_then(|x| fold::slice(x, &starts, &strides, &dims))
        }
        "compare" => {
            let direction = property(op, "comparison_direction")
                .and_then(|d| d.trim_end_matches('>').rsplit(' ').next())
                .unwrap_or("");
            let unsigned = operand_type(0)
                .and_then(|t| t.integer_element())
                .is_some_and(|t| t.unsigned);
            match (c(0), c(1)) {
                (Some(a), Some(b)) => fold::compare(direction, a, b, unsigned),
                _ => None,
            }
        }
        "select" => match (c(0), c(1), c(2)) {
            (Some(p), Some(t), Some(f)) => fold::select(p, t, f),
            _ => None,
        },
        "clamp" => match (c(0), c(1), c(2)) {
            (Some(lo), Some(x), Some(hi)) => fold::clamp(lo, x, hi),
            _ => None,
        },
        "negate" | "abs" | "sign" | "not" => c(0).and_then(|x| fold::unary(short, x, ty)),
        _ => match (c(0), c(1)) {
            (Some(a), Some(b)) if op.operands.len() == 2 => fold::binary(short, a, b, ty),
            _ => None,
        },
    };
    let mut constants = none;
    if let Some(first) = constants.first_mut() {
        *first = folded.filter(|f| f.dims == dims);
    }
    Ok(constants)
}

/// An `i64` constant op (for tests and rewrites).
#[cfg(test)]
fn constant_op(name: &str, values: &[i64], dims: &[i64]) -> Op {
    let ty = types::integer_type("!vhlo.i64_v1").expect("i64");
    let dense_attribute = types::dense_attribute;
    Op {
        name: "vhlo.constant_v1".into(),
        results: vec![name.into()],
        operands: vec![],
        properties: vec![("value".into(), dense_attribute(values, dims, ty))],
        regions: vec![],
        attributes: vec![],
        operand_types: vec![],
        result_types: vec![
            TensorType {
                dims: dims.iter().map(|&d| Some(d)).collect(),
                element: "!vhlo.i64_v1".into(),
                encoding: None,
            }
            .text(),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_drop_the_dialect_and_version() {
        assert_eq!(short_name("vhlo.dot_general_v2"), "dot_general");
        assert_eq!(short_name("vhlo.add_v1"), "add");
        assert_eq!(short_name("sdy.mesh"), "sdy.mesh");
    }

    #[test]
    fn strings_unescape() {
        assert_eq!(
            string_attribute("#vhlo.string_v1<\"a \\22b\\22 {0}\">").as_deref(),
            Some("a \"b\" {0}")
        );
    }

    #[test]
    fn dynamic_ops_with_known_shapes_become_static() {
        let mut refiner = Refiner {
            originals: HashMap::new(),
            specialized: vec![],
            memo: HashMap::new(),
            uses: HashMap::new(),
            in_progress: vec![],
            failed_assertion: None,
            inlined: 0,
        };
        let mut ops = vec![
            constant_op("%s", &[2, 3], &[2]),
            Op {
                name: "vhlo.dynamic_iota_v1".into(),
                results: vec!["%i".into()],
                operands: vec!["%s".into()],
                properties: vec![("iota_dimension".into(), types::i64_attribute(1))],
                regions: vec![],
                attributes: vec![],
                operand_types: vec!["!vhlo.tensor_v1<2x!vhlo.i64_v1>".into()],
                result_types: vec!["!vhlo.tensor_v1<?x?x!vhlo.f32_v1>".into()],
            },
        ];
        let mut env = HashMap::new();
        refiner.refine_ops(&mut ops, &mut env).unwrap();
        assert_eq!(ops[1].name, "vhlo.iota_v1");
        assert!(ops[1].operands.is_empty());
        assert_eq!(ops[1].result_types[0], "!vhlo.tensor_v1<2x3x!vhlo.f32_v1>");
    }
}
