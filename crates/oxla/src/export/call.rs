//! Calling `jax.export` artifacts inside oxla functions ([`ExportedFn`]):
//! the export's module is merged into the calling program as a private
//! function (one executable), its inputs and outputs are oxla pytrees of
//! the export's structure, `grad` goes through the vjp the export was
//! serialized with, and `vmap` calls it once per example.

use oxla_core::primitive::call;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use oxla_core::{Aval, DType, ExportedFunction, Location, Primitive};
use oxla_export::{DisabledCheck, Exported, ModuleForm, PyTreeDef, Sharding};

use crate::array::Array;
use crate::custom::{CustomVjp, custom_vjp};
use crate::error::{Error, Result};
use crate::pytree::{Pytree, TreeDef};

/// The flat function of an export inside a `custom_vjp` whose backward
/// rule calls the export's vjp.
type FlatFn = Box<dyn Fn(Vec<Array>) -> Vec<Array>>;
type Reverse = CustomVjp<Vec<Array>, Vec<Array>, Vec<Array>, FlatFn>;

/// One input of an export: its type, or `None` for a `float0` input (a
/// cotangent of an integer, which holds no data and the module does not
/// take).
type InSlot = Option<Aval>;

/// The `(name, size)` axes of a multi-device export's mesh; `None` for one device.
type MeshAxes = Option<Vec<(String, usize)>>;

struct Inner {
    exported: Exported,
    function: ExportedFunction,
    in_slots: Vec<InSlot>,
    /// Whether each output is `float0` (returned as booleans).
    out_float0: Vec<bool>,
    in_tree: TreeDef,
    out_tree: TreeDef,
    vjp: Option<ExportedFn>,
}

/// A function exported with `jax.export`, callable inside any oxla
/// function (jit, grad, vmap, control flow) as JAX's `exported.call` is.
///
/// The export's module is merged into the calling program as a private
/// function (one executable); its inputs and outputs are oxla pytrees of
/// the export's structure (its positional arguments as a tuple, dicts as
/// `BTreeMap<String, _>`, lists as `Vec`). `grad` goes through the vjp the
/// export was serialized with (`exported.serialize(vjp_order=1)` in
/// Python; without one, `grad` is an error naming `vjp_order`), forward
/// mode is refused (as for a `custom_vjp`), and `vmap` calls it once per
/// example. A shape-polymorphic export is refined to the shapes of each
/// call (one function per distinct shape). Refused when loading, each with
/// its reason: ordered effects, dtypes oxla lacks, another platform, and exports for
/// several devices whose shardings are not named shardings on one mesh.
///
/// A file written by Python (`open("f.jaxexport", "wb").write(exported.serialize())`)
/// loads with [`ExportedFn::from_bytes`]; so does one written by
/// [`Jit::export`](crate::Jit::export):
///
/// ```
/// use oxla::{Array, ExportOptions, ExportedFn, grad, jit, numpy as jnp, vmap};
/// # fn main() -> oxla::Result<()> {
/// let f = jit(|x: Array| jnp::sum(&(&x * &x), None, false));
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// let bytes = f.export(&x, &ExportOptions::new().vjp_order(1))?.to_bytes();
///
/// let g = ExportedFn::from_bytes(&bytes)?;
/// assert_eq!(g.call::<_, Array>(x.clone())?.item::<f32>()?, 5.0);
/// let call = |x: Array| g.call::<_, Array>(x).unwrap_or_else(Array::error);
/// assert_eq!(jit(call).call(x.clone())?.item::<f32>()?, 5.0);                 // merged into a jit
/// assert_eq!(grad(call).call(x.clone())?.to_vec::<f32>()?, vec![2.0, 4.0]);  // through its vjp
/// let xs = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// assert_eq!(vmap(call).call(xs)?.to_vec::<f32>()?, vec![5.0, 25.0]);        // once per example
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ExportedFn(Arc<Callable>);

/// A static export, merged as one function; or a shape-polymorphic one,
/// refined and merged once per distinct set of input shapes.
enum Callable {
    Static(StaticFn),
    Polymorphic(Box<Polymorphic>),
}

/// A shape-polymorphic export and its specializations by input dims.
struct Polymorphic {
    exported: Exported,
    in_tree: TreeDef,
    out_tree: TreeDef,
    specializations: Mutex<HashMap<Vec<Vec<i64>>, StaticFn>>,
}

/// An export with static shapes, ready to merge into a program.
#[derive(Clone)]
struct StaticFn(Arc<Inner>);

/// The oxla dtype of an export's dtype, if oxla has it: the inverse of
/// `program::export_dtype` (complex, 4- and 8-bit floats, keys and
/// float0 have no oxla dtype).
fn oxla_dtype(dtype: oxla_export::DType) -> Option<DType> {
    DType::ALL
        .into_iter()
        .find(|d| super::program::export_dtype(*d) == dtype)
}

/// oxla's form of a JAX pytree structure.
fn oxla_tree(tree: &PyTreeDef, name: &str) -> Result<TreeDef> {
    let all = |children: &[PyTreeDef]| -> Result<Vec<TreeDef>> {
        children.iter().map(|c| oxla_tree(c, name)).collect()
    };
    Ok(match tree {
        PyTreeDef::Leaf => TreeDef::Leaf,
        PyTreeDef::None => TreeDef::None,
        PyTreeDef::Tuple(c) => TreeDef::Tuple(all(c)?),
        PyTreeDef::List(c) => TreeDef::List(all(c)?),
        PyTreeDef::Dict(entries) => TreeDef::Dict(
            entries
                .iter()
                .map(|(k, c)| Ok((k.clone(), oxla_tree(c, name)?)))
                .collect::<Result<Vec<_>>>()?,
        ),
        PyTreeDef::Custom { name: node, .. } => {
            return Err(unusable(
                name,
                format!("its pytree has the custom node {node}, which oxla has no type for"),
            ));
        }
    })
}

/// The `(name, size)` axes of a multi-device export's mesh, from its named
/// shardings (`None` for one device): the mesh its module declares as
/// `sdy.mesh @mesh`, which the calling jit's mesh must equal.
fn export_mesh(exported: &Exported, name: &str) -> Result<MeshAxes> {
    if exported.nr_devices <= 1 {
        return Ok(None);
    }
    let mesh = exported
        .in_shardings
        .iter()
        .chain(&exported.out_shardings)
        .find_map(|s| match s {
            Sharding::Named(named) => Some(&named.mesh),
            _ => None,
        })
        .ok_or_else(|| {
            unusable(
                name,
                format!(
                    "it was exported for {} devices without named shardings (oxla merges exports \
                     partitioned with Shardy over a mesh; run it on its own with \
                     oxla_export::LoadedExport)",
                    exported.nr_devices
                ),
            )
        })?;
    Ok(Some(
        mesh.axis_names
            .iter()
            .zip(&mesh.axis_sizes)
            .map(|(n, s)| (n.clone(), *s as usize))
            .collect(),
    ))
}

fn unusable(name: &str, why: String) -> Error {
    Error::InvalidArgument(format!(
        "the exported function {name} cannot be called in oxla: {why}"
    ))
}

impl ExportedFn {
    /// Reads `Exported.serialize()` bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<ExportedFn> {
        let exported =
            Exported::from_bytes(bytes).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        ExportedFn::new(exported)
    }

    /// Makes `exported` callable: checks that oxla can merge it into its
    /// programs (calling convention, effects, one device or one mesh, this
    /// platform, a module in a form oxla reads) and loads its vjp. A
    /// multi-device export is called inside a jit sharded over a mesh with
    /// its axes, and keeps its shardings there. A shape-polymorphic export
    /// is refined to each distinct set of input shapes it is called with
    /// ([`Exported::refine`]), each its own function in the calling
    /// program (and so its own jit cache entry).
    pub fn new(exported: Exported) -> Result<ExportedFn> {
        if exported.is_shape_polymorphic() {
            let name = exported.function_name.clone();
            check_callable(&exported, &name)?;
            let (in_tree, out_tree) = call_trees(&exported, &name)?;
            return Ok(ExportedFn(Arc::new(Callable::Polymorphic(Box::new(
                Polymorphic {
                    exported,
                    in_tree,
                    out_tree,
                    specializations: Mutex::new(HashMap::new()),
                },
            )))));
        }
        Ok(ExportedFn(Arc::new(Callable::Static(StaticFn::new(
            exported,
        )?))))
    }
}

/// The checks of an export that do not depend on its shapes: its calling
/// convention, effects and mesh, and this platform's index among its
/// platforms. Returns the mesh's axes and the platform index.
fn check_callable(exported: &Exported, name: &str) -> Result<(MeshAxes, usize)> {
    let name = name.to_string();
    let version = exported.calling_convention_version;
    if !(oxla_export::MIN_CALLING_CONVENTION..=oxla_export::MAX_CALLING_CONVENTION)
        .contains(&version)
    {
        return Err(unusable(&name, format!("calling convention {version}")));
    }
    if !exported.ordered_effects.is_empty() {
        return Err(unusable(
            &name,
            format!(
                "it has ordered effects ({})",
                exported.ordered_effects.join(", ")
            ),
        ));
    }
    let mesh_axes = export_mesh(exported, &name)?;
    let platform = crate::runtime::client()?.platform_name()?.to_lowercase();
    let platform_index = match exported.platforms.iter().position(|p| *p == platform) {
        Some(i) => i,
        None if exported.disabled_checks.contains(&DisabledCheck::Platform) => 0,
        None => {
            return Err(unusable(
                &name,
                format!(
                    "it was exported for {}, not {platform}",
                    exported.platforms.join(", ")
                ),
            ));
        }
    };
    Ok((mesh_axes, platform_index))
}

/// The export's argument and result structures as oxla's: `(args, kwargs)`
/// without keyword arguments.
fn call_trees(exported: &Exported, name: &str) -> Result<(TreeDef, TreeDef)> {
    match &exported.in_tree {
        PyTreeDef::Tuple(parts) if parts.len() == 2 => {
            if !matches!(&parts[1], PyTreeDef::Dict(kwargs) if kwargs.is_empty()) {
                return Err(unusable(
                    name,
                    format!(
                        "it takes keyword arguments ({}), which oxla does not pass",
                        parts[1]
                    ),
                ));
            }
            Ok((
                oxla_tree(&parts[0], name)?,
                oxla_tree(&exported.out_tree, name)?,
            ))
        }
        other => Err(unusable(
            name,
            format!("its input structure {other} is not (args, kwargs)"),
        )),
    }
}

impl StaticFn {
    // Long by design: the checks an export must pass, in the order JAX
    // documents them, each with its own error; they share the parsed module.
    /// Checks that oxla can merge the static `exported` into its programs
    /// and loads its vjp.
    fn new(exported: Exported) -> Result<StaticFn> {
        let name = exported.function_name.clone();
        let (mesh_axes, platform_index) = check_callable(&exported, &name)?;
        let from_artifact = matches!(exported.module_form(), ModuleForm::PortableArtifact(_));
        let module = match exported.module_form() {
            ModuleForm::Text => String::from_utf8(exported.mlir_module.clone())
                .map_err(|_| unusable(&name, "its module text is not UTF-8".into()))?,
            ModuleForm::PortableArtifact(_) => oxla_export::artifact_to_text(&exported.mlir_module)
                .map_err(|e| {
                    unusable(&name, format!("its portable artifact cannot be read: {e}"))
                })?,
            form @ ModuleForm::Bytecode => {
                return Err(unusable(
                    &name,
                    format!(
                        "its module is {form} of another producer than StableHLO; oxla merges \
                         StableHLO portable artifacts and StableHLO text in MLIR's generic form \
                         (run it on its own with oxla_export::LoadedExport)"
                    ),
                ));
            }
        };
        let value_type = |what: &str, i: usize, a: &oxla_export::AbstractValue| {
            let dims = a
                .static_dims()
                .ok_or_else(|| unusable(&name, format!("{what} {i} has the symbolic shape {a}")))?;
            let dtype = match a.dtype {
                oxla_export::DType::F0 => None,
                d => Some(oxla_dtype(d).ok_or_else(|| {
                    unusable(
                        &name,
                        format!("{what} {i} is {a}, a dtype oxla does not have"),
                    )
                })?),
            };
            Ok::<_, Error>((dims, dtype))
        };
        let mut in_slots = Vec::with_capacity(exported.in_avals.len());
        for (i, a) in exported.in_avals.iter().enumerate() {
            let (dims, dtype) = value_type("input", i, a)?;
            in_slots.push(dtype.map(|d| Aval::new(d, &dims)));
        }
        let mut out_avals = Vec::with_capacity(exported.out_avals.len());
        let mut out_float0 = Vec::with_capacity(exported.out_avals.len());
        for (i, a) in exported.out_avals.iter().enumerate() {
            // A float0 output comes back as booleans of its shape.
            let (dims, dtype) = value_type("output", i, a)?;
            out_avals.push(Aval::new(dtype.unwrap_or(DType::Bool), &dims));
            out_float0.push(dtype.is_none());
        }
        let kept_avals: Vec<Aval> = exported
            .module_kept_var_idx
            .iter()
            .map(|&i| {
                in_slots[i].clone().ok_or_else(|| {
                    unusable(&name, format!("its module keeps the float0 input {i}"))
                })
            })
            .collect::<Result<_>>()?;
        let function = ExportedFunction::new(
            &name,
            module,
            kept_avals,
            out_avals,
            (exported.platforms.len() > 1).then_some(platform_index as i32),
            mesh_axes,
        );
        if from_artifact {
            // oxla's own VHLO printer wrote the text: it parses; a parse
            // here would cost more than reading the whole export.
            if !function
                .module()
                .contains("sym_name = #vhlo.string_v1<\"main\">")
            {
                return Err(unusable(&name, "its module has no function `main`".into()));
            }
        } else {
            oxla_lower::check_exported_module(&function)?;
        }
        if function.mesh_axes().is_some() {
            let declared = function
                .module()
                .split("\"sdy.mesh\"")
                .skip(1)
                .filter_map(|rest| rest.split("sym_name = \"").nth(1)?.split('"').next())
                .collect::<Vec<_>>();
            if declared != [oxla_lower::MESH_SYMBOL] {
                return Err(unusable(
                    &name,
                    format!(
                        "its module declares the meshes {declared:?}; oxla merges a module with \
                         one mesh named `{}`, as JAX writes",
                        oxla_lower::MESH_SYMBOL
                    ),
                ));
            }
        }
        let (in_tree, out_tree) = call_trees(&exported, &name)?;
        let vjp = exported
            .vjp
            .as_deref()
            .map(|v| ExportedFn::new(v.clone()))
            .transpose()?;
        Ok(StaticFn(Arc::new(Inner {
            exported,
            function,
            in_slots,
            out_float0,
            in_tree,
            out_tree,
            vjp,
        })))
    }
}

/// A usage error of the exported function `name` at `location`.
fn usage(name: &str, message: String, location: Location) -> Error {
    Error::Usage {
        function: "exported function",
        message: format!("{name}: {message}"),
        location,
    }
}

impl ExportedFn {
    /// The export this function calls.
    pub fn exported(&self) -> &Exported {
        match &*self.0 {
            Callable::Static(f) => &f.0.exported,
            Callable::Polymorphic(p) => &p.exported,
        }
    }

    /// Whether `grad` can go through it (it was exported with its vjp).
    pub fn has_vjp(&self) -> bool {
        self.exported().vjp.is_some()
    }

    /// The argument and result structures.
    fn trees(&self) -> (&TreeDef, &TreeDef) {
        match &*self.0 {
            Callable::Static(f) => (&f.0.in_tree, &f.0.out_tree),
            Callable::Polymorphic(p) => (&p.in_tree, &p.out_tree),
        }
    }

    /// Calls the exported function on `args`: the positional arguments as a
    /// tuple (or the one argument itself), with the export's structure
    /// (dicts as `BTreeMap<String, _>`, lists as `Vec`), returning its
    /// outputs in their structure. Inside `grad` it differentiates through
    /// the export's vjp; inside `vmap` it runs once per example.
    #[track_caller]
    pub fn call<In: Pytree, Out: Pytree>(&self, args: In) -> Result<Out> {
        let location = Location::from_caller(std::panic::Location::caller());
        let (leaves, tree) = args.flatten();
        let (in_tree, out_tree) = self.trees();
        let single = match in_tree {
            TreeDef::Tuple(args) if args.len() == 1 => Some(&args[0]),
            _ => None,
        };
        if tree != *in_tree && Some(&tree) != single {
            return Err(usage(
                &self.exported().function_name,
                format!("the arguments' structure {tree} differs from the export's {in_tree}"),
                location,
            ));
        }
        let outs = self.call_flat(leaves, location)?;
        Out::unflatten_from(out_tree, &mut outs.into_iter())
    }

    /// Calls it on flat leaves in JAX's order: a polymorphic export through
    /// its specialization to the leaves' shapes.
    fn call_flat(&self, leaves: Vec<Array>, location: Location) -> Result<Vec<Array>> {
        match &*self.0 {
            Callable::Static(f) => f.call_flat(leaves, location),
            Callable::Polymorphic(p) => {
                p.specialize(&leaves, location)?.call_flat(leaves, location)
            }
        }
    }
}

impl Polymorphic {
    /// The export refined to the shapes of `leaves`, made once per shape.
    fn specialize(&self, leaves: &[Array], location: Location) -> Result<StaticFn> {
        let name = &self.exported.function_name;
        if leaves.len() != self.exported.in_avals.len() {
            return Err(usage(
                name,
                format!(
                    "{} inputs for {} exported",
                    leaves.len(),
                    self.exported.in_avals.len()
                ),
                location,
            ));
        }
        let dims = leaves
            .iter()
            .map(|x| Ok(x.aval()?.shape.to_vec()))
            .collect::<Result<Vec<Vec<i64>>>>()?;
        let mut specializations = self
            .specializations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(done) = specializations.get(&dims) {
            return Ok(done.clone());
        }
        let refined = self
            .exported
            .refine(&dims)
            .map_err(|e| usage(name, e.to_string(), location))?;
        let done = StaticFn::new(refined)?;
        specializations.insert(dims, done.clone());
        Ok(done)
    }
}

impl StaticFn {
    fn usage(&self, message: String, location: Location) -> Error {
        usage(&self.0.exported.function_name, message, location)
    }

    /// Calls it on flat leaves in JAX's order.
    fn call_flat(&self, leaves: Vec<Array>, location: Location) -> Result<Vec<Array>> {
        let slots = &self.0.in_slots;
        if leaves.len() != slots.len() {
            return Err(self.usage(
                format!("{} inputs for {} exported", leaves.len(), slots.len()),
                location,
            ));
        }
        for (i, (x, slot)) in leaves.iter().zip(slots).enumerate() {
            let aval = x.aval()?;
            if let Some(want) = slot
                && (aval.dtype != want.dtype || aval.shape != want.shape)
            {
                return Err(self.usage(
                    format!("input {i} is {aval}, but it was exported for {want}"),
                    location,
                ));
            }
        }
        if !crate::trace::is_tracing() {
            return self.bind(&leaves);
        }
        self.reverse().call(leaves)
    }

    /// Binds the primitive on the kept leaves.
    fn bind(&self, leaves: &[Array]) -> Result<Vec<Array>> {
        let kept: Vec<&Array> = self
            .0
            .exported
            .module_kept_var_idx
            .iter()
            .map(|&i| &leaves[i])
            .collect();
        crate::transform::support::bind_all(
            Primitive::Call(call::Op::CallExported {
                function: self.0.function.clone(),
            }),
            &kept,
        )
    }

    /// The function with its vjp as its reverse-mode rule; the residuals
    /// are the inputs.
    fn reverse(&self) -> Reverse {
        let primal = self.clone();
        let forward = self.clone();
        let backward = self.clone();
        let f: FlatFn = Box::new(move |leaves| {
            primal.bind(&leaves).unwrap_or_else(|e| {
                primal
                    .0
                    .out_float0
                    .iter()
                    .map(|_| Array::error(e.clone()))
                    .collect()
            })
        });
        custom_vjp(
            f,
            move |leaves: Vec<Array>| {
                let outs = forward
                    .bind(&leaves)
                    .unwrap_or_else(|e| vec![Array::error(e); forward.0.out_float0.len()]);
                (outs, leaves)
            },
            move |leaves: Vec<Array>, cts: Vec<Array>| backward.backward(leaves, cts),
        )
    }

    /// Input cotangents from the export's vjp; an error for each when the
    /// export has none.
    fn backward(&self, leaves: Vec<Array>, cts: Vec<Array>) -> Vec<Array> {
        let Some(vjp) = &self.0.vjp else {
            let e = Error::InvalidArgument(format!(
                "grad of the exported function {}: it was serialized without its vjp; export \
                 it with `exported.serialize(vjp_order=1)` (or higher for higher derivatives)",
                self.0.exported.function_name
            ));
            return vec![Array::error(e); leaves.len()];
        };
        let mut args = leaves.clone();
        args.extend(cts);
        let location =
            crate::ops::rule_location().unwrap_or(crate::transform::eval::UNKNOWN_LOCATION);
        match vjp.call_flat(args, location) {
            Ok(in_cts) => in_cts
                .into_iter()
                .zip(&leaves)
                .zip(&self.0.in_slots)
                .map(|((ct, x), slot)| match slot {
                    Some(a) if a.dtype.is_float() => ct,
                    // Integer (and float0) inputs have zero cotangents.
                    Some(_) | None => crate::transform::support::zeros(
                        &x.aval()
                            .cloned()
                            .unwrap_or_else(|_| Aval::new(DType::Bool, &[])),
                    ),
                })
                .collect(),
            Err(e) => vec![Array::error(e); leaves.len()],
        }
    }
}

#[cfg(test)]
mod dtype_tests {
    use super::*;

    #[test]
    fn every_oxla_dtype_goes_to_the_export_schema_and_back() {
        for dtype in DType::ALL {
            assert_eq!(
                oxla_dtype(super::super::program::export_dtype(dtype)),
                Some(dtype)
            );
        }
        assert_eq!(oxla_dtype(oxla_export::DType::F8E4M3Fn), None);
        assert_eq!(oxla_dtype(oxla_export::DType::F0), None);
    }
}
