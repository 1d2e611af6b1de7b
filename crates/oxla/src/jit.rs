//! `jit`: trace a function once per signature, lower it, compile it, keep
//! it in a memory cache, and run the compiled code on later calls.
//!
//! The cache key is the input pytree's structure (with the values of static
//! fields), each leaf's dtype, shape and weak type, and the x64 and
//! threefry_partitionable flags. Arrays
//! the function captures (closes over) become constants of the jaxpr and are
//! passed to the compiled program as leading arguments, never embedded in
//! the module; Rust scalars in the function become literals in it.
//!
//! A function of arrays split over a mesh (or given `in_shardings` /
//! `out_shardings`, or pinning layouts with `with_sharding_constraint`) is
//! compiled as one SPMD program over the mesh's devices; the leaves'
//! shardings are part of the cache key.

use oxla_core::primitive::{call, sharding};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oxla_core::{Aval, Jaxpr, Location, ShardingDesc};
use oxla_pjrt::LoadedExecutable;

use crate::array::Array;
use crate::config::{explain_cache_misses, log_compiles, x64_enabled};
use crate::error::{Error, Result};
use crate::pytree::{Pytree, TreeDef};
use crate::sharding::NamedSharding;
use crate::sharding::jit_layouts::{Layouts, top_level_leaves};
use crate::sharding::spmd::{self, SpmdProgram};

/// What a compiled function is specialized on: a [`Jit`] keeps one
/// executable per key, and a call whose key it has not seen traces and
/// compiles again.
///
/// The key holds what the traced program depends on, and nothing else:
///
/// - the input pytree's structure ([`TreeDef`]): tuple arity, `Vec`
///   lengths, map keys, `Some` or `None`, struct names and fields, **and
///   the values of static fields** ([`Static`](crate::Static) arguments and
///   `#[pytree(static)]` fields, compared by their `Debug` text);
/// - each input leaf's dtype, shape and weak type ([`Aval`]);
/// - each input leaf's sharding over a mesh (`None` for an array on one
///   device);
/// - the flags that change tracing: x64 ([`enable_x64`](crate::enable_x64))
///   and `jax_threefry_partitionable`
///   ([`set_threefry_partitionable`](crate::random::set_threefry_partitionable)).
///
/// New *values* of the same dtypes and shapes hit the cache. Arrays the
/// function captures (closes over) are not part of the key: they become
/// constants of the jaxpr, kept with the executable (the values seen when
/// it was traced) and passed to the compiled program as leading
/// arguments, never embedded in the module. Rust numbers the function uses
/// become literals in the module, so a new number needs a new `jit` (or
/// an array or [`Static`](crate::Static) argument).
/// [`Jit::explain_miss`] says which part of the key changed.
///
/// ```
/// use oxla::{Array, jit};
/// # fn main() -> oxla::Result<()> {
/// let f = jit(|x: Array| &x * 2.0);
/// assert_eq!(f.call(Array::from_slice(&[1.0f32, 2.0], &[2])?)?.to_vec::<f32>()?, vec![2.0, 4.0]);
/// let y = f.call(Array::from_slice(&[3.0f32, 4.0], &[2])?)?;   // new values: a hit
/// assert_eq!(y.to_vec::<f32>()?, vec![6.0, 8.0]);
/// assert_eq!(f.cache_size(), 1);
/// let longer = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
/// assert_eq!(
///     f.explain_miss(&longer)?.as_deref(),
///     Some("input 0 changed shape from f32[2] to f32[3]")
/// );
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// The input structure, static values included.
    pub tree: TreeDef,
    /// Each input leaf's abstract value.
    pub avals: Vec<Aval>,
    /// The x64 flag.
    pub x64: bool,
    /// The `jax_threefry_partitionable` flag (random bits depend on it).
    pub threefry_partitionable: bool,
    /// The default matmul precision (`jax_default_matmul_precision`).
    pub default_matmul_precision: Option<oxla_core::Precision>,
    /// Each input leaf's sharding over a mesh (`None`: on one device).
    pub shardings: Vec<Option<ShardingDesc>>,
    /// The id of the device a single-device program runs on, when an
    /// argument was put on one other than the default (`None`: the
    /// default device).
    pub device: Option<i64>,
}

/// The compiled program of one signature.
enum Executable {
    /// For one device.
    Single(LoadedExecutable),
    /// For the devices of a mesh.
    Spmd(SpmdProgram),
}

impl Executable {
    fn loaded(&self) -> &LoadedExecutable {
        match self {
            Executable::Single(e) => e,
            Executable::Spmd(p) => &p.executable,
        }
    }
}

/// A traced, lowered and compiled function.
struct Compiled {
    executable: Executable,
    report: CompileReport,
    consts: Vec<Array>,
    out_tree: TreeDef,
    out_avals: Vec<Aval>,
    /// Input leaves whose buffers an output reuses (donated), with their
    /// description for errors.
    donated: Vec<(usize, String)>,
    /// Every other argument (constants included) is marked non-donatable,
    /// so PJRT consumes exactly the donated buffers.
    execute_options: oxla_pjrt::ExecuteOptions,
}

/// How a jitted function's executable was made for one signature (see
/// [`Jit::compile`]): `source` says whether the plugin compiled it or it was
/// loaded from the persistent disk cache
/// ([`set_compile_cache_dir`](crate::set_compile_cache_dir)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompileReport {
    /// Tracing the function to a jaxpr.
    pub trace: Duration,
    /// Lowering the jaxpr to StableHLO.
    pub lower: Duration,
    /// Compiled by the plugin, or loaded from the persistent disk cache.
    pub source: oxla_cache::Source,
}

/// One sentence for a log line: how long tracing and lowering took, and
/// whether the plugin compiled the program (and the disk cache stored it)
/// or the disk cache had it, with the compile time it saved.
///
/// ```
/// use std::time::Duration;
/// use oxla::{CompileReport, CompileSource};
/// let ms = Duration::from_millis;
/// let report = CompileReport { trace: ms(2), lower: ms(1), source: CompileSource::Compiled { compile: ms(250) } };
/// assert_eq!(report.to_string(), "traced in 2.0 ms, lowered in 1.0 ms, compiled in 250 ms");
/// let hit = CompileSource::DiskHit { load: ms(4), saved: ms(250) };
/// let report = CompileReport { source: hit, ..report };
/// assert_eq!(
///     report.to_string(),
///     "traced in 2.0 ms, lowered in 1.0 ms, loaded from the disk cache in 4.0 ms (compiling took 250 ms)"
/// );
/// ```
impl std::fmt::Display for CompileReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "traced in {:.1} ms, lowered in {:.1} ms, ",
            ms(self.trace),
            ms(self.lower)
        )?;
        match self.source {
            oxla_cache::Source::Compiled { compile } => {
                write!(f, "compiled in {:.0} ms", ms(compile))
            }
            oxla_cache::Source::DiskHit { load, saved } => write!(
                f,
                "loaded from the disk cache in {:.1} ms (compiling took {:.0} ms)",
                ms(load),
                ms(saved)
            ),
        }
    }
}

/// A traced function: its jaxpr, the arrays it captured, its output structure.
pub struct Traced {
    /// The jaxpr (constants first, then the inputs).
    pub jaxpr: Jaxpr,
    /// The captured arrays, in the order of `jaxpr.constvars`.
    pub consts: Vec<Array>,
    /// The structure of the outputs.
    pub out_tree: TreeDef,
}

/// A jitted function, made by [`jit`]: it traces the function once per
/// signature ([`CacheKey`]), lowers the jaxpr to StableHLO, compiles it with
/// the plugin (or loads it from the persistent disk cache), keeps the
/// executable in a memory cache, and runs the compiled code on later calls.
///
/// Builder methods set what `jax.jit`'s keyword arguments do:
/// [`donate`](Jit::donate) (`donate_argnums`),
/// [`in_shardings`](Jit::in_shardings), [`out_shardings`](Jit::out_shardings)
/// and [`named`](Jit::named). [`call`](Jit::call) runs it;
/// [`trace`](Jit::trace), [`lower`](Jit::lower), [`compile`](Jit::compile)
/// and [`memory_stats`](Jit::memory_stats) are the ahead-of-time stages;
/// [`export`](Jit::export) writes it as a `jax.export` file.
///
/// A function of arrays split over a mesh (or given `in_shardings` /
/// `out_shardings`, or pinning layouts with
/// [`with_sharding_constraint`](crate::with_sharding_constraint)) is
/// compiled as one SPMD program over the mesh's devices; the leaves'
/// shardings are part of the cache key.
pub struct Jit<In, Out, F> {
    f: F,
    name: String,
    donate_argnums: Vec<usize>,
    in_shardings: Layouts,
    out_shardings: Layouts,
    cache: Mutex<HashMap<CacheKey, Arc<Compiled>>>,
    order: Mutex<Vec<CacheKey>>,
    _signature: PhantomData<fn(In) -> Out>,
}

/// `f`, compiled: as `jax.jit`, the first call for each new signature
/// ([`CacheKey`]: the input structure with static values, each leaf's
/// dtype, shape, weak type and sharding, the x64 and threefry flags) runs
/// `f` once on tracers to record a jaxpr, lowers and compiles it; later
/// calls with the same signature run the compiled program without running
/// `f`. `f` takes one pytree (a tuple for several arguments) and returns
/// one (a `Result` too: an `Err` from inside is the error of
/// [`Jit::call`]).
///
/// Inside `f`, values are tracers: their values are unknown until the
/// program runs, so reading one on the host (`item`, `to_vec`) is
/// [`Error::Concretization`]; branch and loop on traced values with
/// [`lax::cond`](crate::lax::cond), [`lax::while_loop`](crate::lax::while_loop)
/// and friends. Rust side effects in `f` happen once per trace, not per call.
/// Arrays `f` captures are passed to the program as arguments (not part of
/// the key); Rust numbers it uses are literals of the program.
///
/// A `jit` called inside another transformation (`grad`, `vmap`, another
/// `jit`) is not compiled on its own: it is traced into the outer program
/// as a call (JAX's `pjit`) that every transformation sees through.
///
/// ```
/// use oxla::{Array, jit, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let f = jit(|(x, y): (Array, Array)| jnp::sum(&(&x * &y), None, false) + 1.0);
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
/// let y = Array::from_slice(&[4.0f32, 5.0, 6.0], &[3])?;
/// assert_eq!(f.call((x, y))?.item::<f32>()?, 33.0);
/// # Ok(())
/// # }
/// ```
pub fn jit<In: Pytree, Out: Pytree, F: Fn(In) -> Out>(f: F) -> Jit<In, Out, F> {
    Jit {
        f,
        name: short_name(std::any::type_name::<F>()),
        donate_argnums: Vec::new(),
        in_shardings: Layouts::Unspecified,
        out_shardings: Layouts::Unspecified,
        cache: Mutex::new(HashMap::new()),
        order: Mutex::new(Vec::new()),
        _signature: PhantomData,
    }
}

fn short_name(type_name: &str) -> String {
    type_name.replace("::{{closure}}", "::<closure>")
}

pub(crate) fn abstract_leaves(leaves: &[Array]) -> Result<Vec<Aval>> {
    leaves.iter().map(|x| x.aval().cloned()).collect()
}

/// Traces `f` on arguments shaped like `args` (their leaves replaced by tracers).
pub(crate) fn trace<In: Pytree, Out: Pytree>(
    f: impl FnOnce(In) -> Out,
    args: &In,
    avals: &[Aval],
    location: Location,
) -> Result<Traced> {
    let mut out_tree = None;
    let (jaxpr, consts) = crate::transform::eval::trace_flat(avals, true, location, |tracers| {
        let traced_args = args.with_leaves(&mut tracers.iter().cloned())?;
        let (leaves, tree) = f(traced_args).flatten();
        out_tree = Some(tree);
        Ok(leaves)
    })?;
    Ok(Traced {
        jaxpr,
        consts,
        out_tree: out_tree.expect("traced"),
    })
}

/// The jaxpr of `f` on arguments like `args`, as `jax.make_jaxpr(f)(*args)`:
/// `f` traced with tracers of `args`' dtypes and shapes (their values are
/// not read). Its `Display` is JAX's jaxpr syntax.
///
/// ```
/// use oxla::{Array, grad, make_jaxpr, numpy as jnp};
/// # fn main() -> oxla::Result<()> {
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
/// let jaxpr = make_jaxpr(|x: Array| jnp::sin(&x) * 2.0, &x)?;
/// assert_eq!(jaxpr.eqns.len(), 2);
/// assert!(jaxpr.to_string().contains("sin"));
/// // Transformations show their work: the gradient of sin is a cos.
/// let dj = make_jaxpr(|x: Array| grad(|x: Array| jnp::sum(&jnp::sin(&x), None, false)).call(x), &x)?;
/// assert!(dj.to_string().contains("cos"));
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn make_jaxpr<In: Pytree, Out: Pytree>(f: impl Fn(In) -> Out, args: &In) -> Result<Jaxpr> {
    let location = Location::from_caller(std::panic::Location::caller());
    let (leaves, _) = args.flatten();
    Ok(trace(&f, args, &abstract_leaves(&leaves)?, location)?.jaxpr)
}

impl<In: Pytree, Out: Pytree, F: Fn(In) -> Out> Jit<In, Out, F> {
    /// Gives the function a name for logs and errors.
    pub fn named(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    /// Donates the buffers of these top-level arguments (positions in the
    /// input tuple; 0 for a non-tuple input): outputs of the same type and
    /// shape reuse them in place, and the donated arrays cannot be used
    /// after the call (as `jax.jit(f, donate_argnums=...)`): using one is
    /// [`Error::Donated`], naming the argument, its leaf path and the
    /// function. [`memory_stats`](Jit::memory_stats) shows the aliased bytes.
    ///
    /// ```
    /// use oxla::{Array, Error, jit};
    /// # fn main() -> oxla::Result<()> {
    /// let step = jit(|(w, g): (Array, Array)| &w - &g).donate(&[0]);
    /// let w = Array::from_slice(&[1.0f32, 2.0], &[2])?;
    /// let g = Array::from_slice(&[0.5f32, 0.5], &[2])?;
    /// let w2 = step.call((w.clone(), g))?;
    /// assert_eq!(w2.to_vec::<f32>()?, vec![0.5, 1.5]);
    /// assert!(matches!(w.to_vec::<f32>(), Err(Error::Donated { .. })));
    /// # Ok(())
    /// # }
    /// ```
    pub fn donate(mut self, argnums: &[usize]) -> Self {
        self.donate_argnums = argnums.to_vec();
        self
    }

    /// Lays out top-level argument `i` (every leaf of it) as
    /// `shardings[i]` (`None`: as the argument is): arrays on one device
    /// are split accordingly at each call; an array already split another
    /// way is an error (as `jax.jit(f, in_shardings=...)`).
    pub fn in_shardings(mut self, shardings: Vec<Option<NamedSharding>>) -> Self {
        self.in_shardings = Layouts::PerArgument(shardings);
        self
    }

    /// Lays out each input leaf as `sharding(path, aval)` says (`None`: as
    /// the leaf is), JAX's `in_shardings` given as a pytree of shardings:
    /// `path` is the leaf's key path as JAX's `keystr` writes it
    /// (`[0].layers[1].kernel` for leaf `layers[1].kernel` of argument 0).
    ///
    /// ```
    /// use oxla::{Array, Mesh, NamedSharding, P, jit};
    /// # fn main() -> oxla::Result<()> {
    /// oxla::set_cpu_device_count(4)?;                      // before the first array
    /// let mesh = Mesh::new(&[("model", 4)])?;
    /// let columns = NamedSharding::new(&mesh, P![None, "model"]);
    /// // Kernels split by columns, everything else as it is.
    /// let f = jit(|(w, b): (Array, Array)| &w + &b)
    ///     .in_shardings_by(move |path, _| (path == "[0]").then(|| columns.clone()));
    /// let w = Array::from_slice(&[0.0f32; 8], &[2, 4])?;
    /// let b = Array::from_slice(&[1.0f32; 4], &[4])?;
    /// let shardings = f.input_shardings(&(w, b))?;
    /// assert_eq!(shardings[0].as_ref().unwrap().spec().to_string(), "P(None, 'model')");
    /// # Ok(())
    /// # }
    /// ```
    pub fn in_shardings_by(
        mut self,
        sharding: impl Fn(&str, &Aval) -> Option<NamedSharding> + Send + Sync + 'static,
    ) -> Self {
        self.in_shardings = Layouts::PerLeaf(Arc::new(sharding));
        self
    }

    /// Lays out top-level output `i` (every leaf of it; the whole output
    /// when it is not a tuple) as `shardings[i]` (`None`: as XLA chooses).
    pub fn out_shardings(mut self, shardings: Vec<Option<NamedSharding>>) -> Self {
        self.out_shardings = Layouts::PerArgument(shardings);
        self
    }

    /// Lays out each output leaf as `sharding(path, aval)` says (`None`: as
    /// XLA chooses), JAX's `out_shardings` given as a pytree of shardings.
    pub fn out_shardings_by(
        mut self,
        sharding: impl Fn(&str, &Aval) -> Option<NamedSharding> + Send + Sync + 'static,
    ) -> Self {
        self.out_shardings = Layouts::PerLeaf(Arc::new(sharding));
        self
    }

    /// The compiler's memory plan for `args` (compiling them if needed):
    /// argument, output, alias (donated) and temporary bytes.
    #[track_caller]
    pub fn memory_stats(&self, args: &In) -> Result<oxla_pjrt::CompiledMemoryStats> {
        let location = Location::from_caller(std::panic::Location::caller());
        let (_, key) = self.key(args, location)?;
        Ok(self
            .compiled(args, key, location)?
            .executable
            .loaded()
            .compiled_memory_stats()?)
    }

    /// Input/output aliases of the donated leaves (each aliases the first
    /// unclaimed output of its dtype and shape), and the leaves aliased.
    #[allow(clippy::type_complexity)]
    fn aliases(
        &self,
        traced: &Traced,
        key: &CacheKey,
    ) -> (Vec<(usize, usize)>, Vec<(usize, String)>) {
        let consts = traced.jaxpr.constvars.len();
        let mut claimed = vec![false; traced.jaxpr.outvars.len()];
        let mut aliases = Vec::new();
        let mut donated = Vec::new();
        for (leaf, what) in self.donated_leaves(&key.tree) {
            let aval = &key.avals[leaf];
            let found = traced.jaxpr.outvars.iter().enumerate().find(|(j, o)| {
                let out = traced.jaxpr.atom_aval(o);
                !claimed[*j] && out.dtype == aval.dtype && out.shape == aval.shape
            });
            if let Some((j, _)) = found {
                claimed[j] = true;
                aliases.push((consts + leaf, j));
                donated.push((leaf, what));
            }
        }
        (aliases, donated)
    }

    /// The donated input leaves of a signature and their descriptions.
    fn donated_leaves(&self, tree: &TreeDef) -> Vec<(usize, String)> {
        let paths = tree.leaf_paths();
        let mut out = Vec::new();
        for (argnum, leaves) in top_level_leaves(tree).into_iter().enumerate() {
            if self.donate_argnums.contains(&argnum) {
                for leaf in leaves {
                    let path = paths.get(leaf).map(String::as_str).unwrap_or("");
                    out.push((
                        leaf,
                        format!(
                            "argument {argnum}{} of {}",
                            if path.is_empty() {
                                String::new()
                            } else {
                                format!(" ({path})")
                            },
                            self.name
                        ),
                    ));
                }
            }
        }
        out
    }

    /// The sharding of each parameter (constants, then input leaves) and
    /// result of a traced signature; an input already split otherwise than
    /// its `in_shardings` entry is an error naming both.
    #[allow(clippy::type_complexity)]
    fn shardings(
        &self,
        traced: &Traced,
        key: &CacheKey,
        location: Location,
    ) -> Result<(Vec<Option<ShardingDesc>>, Vec<Option<ShardingDesc>>)> {
        let paths = key.tree.leaf_paths();
        let mut args: Vec<Option<ShardingDesc>> = vec![None; traced.jaxpr.constvars.len()];
        args.extend(key.shardings.iter().cloned());
        let consts = traced.jaxpr.constvars.len();
        let in_avals: Vec<&Aval> = key.avals.iter().collect();
        let wanted_in = self.in_shardings.per_leaf(&key.tree, &in_avals);
        for (leaf, wanted) in wanted_in.into_iter().enumerate() {
            let Some((argnum, wanted)) = wanted else {
                continue;
            };
            let what = format!(
                "argument {argnum}{} of {}",
                paths
                    .get(leaf)
                    .map(|p| format!(" ({p})"))
                    .unwrap_or_default(),
                self.name
            );
            wanted.check(&key.avals[leaf], &what, location)?;
            let slot = &mut args[consts + leaf];
            if let Some(has) = slot.as_ref()
                && *has != wanted.desc()
            {
                return Err(Error::Sharding {
                    message: format!(
                        "{what} is an array sharded as {has}, but in_shardings asks for \
                         {wanted}; reshard it with device_put first"
                    ),
                    location: Some(location),
                });
            }
            *slot = Some(wanted.desc());
        }
        let out_avals: Vec<&Aval> = traced
            .jaxpr
            .outvars
            .iter()
            .map(|a| traced.jaxpr.atom_aval(a))
            .collect();
        let mut results: Vec<Option<ShardingDesc>> = vec![None; out_avals.len()];
        let wanted_out = self.out_shardings.per_leaf(&traced.out_tree, &out_avals);
        for (leaf, wanted) in wanted_out.into_iter().enumerate() {
            let Some((outnum, wanted)) = wanted else {
                continue;
            };
            let what = format!("output {outnum} of {}", self.name);
            wanted.check(out_avals[leaf], &what, location)?;
            results[leaf] = Some(wanted.desc());
        }
        Ok((args, results))
    }

    /// Number of compiled signatures in the memory cache.
    pub fn cache_size(&self) -> usize {
        self.cache.lock().map(|c| c.len()).unwrap_or(0)
    }

    fn key(&self, args: &In, location: Location) -> Result<(Vec<Array>, CacheKey)> {
        let (leaves, tree) = args.flatten();
        let avals = abstract_leaves(&leaves)?;
        let shardings = leaves.iter().map(Array::program_sharding).collect();
        let device = crate::sharding::committed::program_device(&leaves, location)?
            .map(|d| d.id().map(i64::from))
            .transpose()?;
        Ok((
            leaves,
            CacheKey {
                tree,
                avals,
                x64: x64_enabled(),
                threefry_partitionable: crate::random::threefry_partitionable(),
                default_matmul_precision: crate::config::default_matmul_precision(),
                shardings,
                device,
            },
        ))
    }

    /// The traced jaxpr for `args`.
    #[track_caller]
    pub fn trace(&self, args: &In) -> Result<Traced> {
        let location = Location::from_caller(std::panic::Location::caller());
        let (_, key) = self.key(args, location)?;
        trace(&self.f, args, &key.avals, location)
    }

    /// The function's name (for logs, errors and exports).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The trace for `args` with its input structure and the shardings of
    /// its parameters (constants first) and results, laid out on the
    /// program's mesh as for compiling: what an export is made of.
    #[allow(clippy::type_complexity)]
    pub(crate) fn trace_for_export(
        &self,
        args: &In,
        location: Location,
    ) -> Result<(
        Traced,
        TreeDef,
        Vec<Option<ShardingDesc>>,
        Vec<Option<ShardingDesc>>,
    )> {
        let (_, key) = self.key(args, location)?;
        let traced = trace(&self.f, args, &key.avals, location)?;
        let (args, results) = self.shardings(&traced, &key, location)?;
        let (args, results) = program_layouts(&traced.jaxpr, args, results, &[])?;
        Ok((traced, key.tree, args, results))
    }

    /// The StableHLO text the function lowers to for `args`.
    #[track_caller]
    pub fn lower(&self, args: &In) -> Result<String> {
        let location = Location::from_caller(std::panic::Location::caller());
        let (_, key) = self.key(args, location)?;
        let traced = trace(&self.f, args, &key.avals, location)?;
        let (aliases, _) = self.aliases(&traced, &key);
        let (args, results) = self.shardings(&traced, &key, location)?;
        let (args, results) = program_layouts(&traced.jaxpr, args, results, &aliases)?;
        Ok(oxla_lower::lower(
            &traced.jaxpr,
            &oxla_lower::Lowering {
                platform: crate::runtime::lowering_platform(),
                aliases: &aliases,
                arg_shardings: &args,
                result_shardings: &results,
                ..oxla_lower::Lowering::default()
            },
        )?)
    }

    /// Compiles ahead of time for `args` (filling the cache), and reports
    /// how the executable was made: traced, lowered and then compiled or
    /// loaded from the disk cache (the first report again on a memory hit).
    ///
    /// ```
    /// use oxla::{Array, CompileSource, jit};
    /// # fn main() -> oxla::Result<()> {
    /// let f = jit(|x: Array| &x + 1.0);
    /// let x = Array::from_slice(&[1.0f32], &[1])?;
    /// let report = f.compile(&x)?;
    /// assert!(matches!(report.source, CompileSource::Compiled { .. } | CompileSource::DiskHit { .. }));
    /// assert_eq!(f.cache_size(), 1);                 // the call below is a hit
    /// assert_eq!(f.call(x)?.to_vec::<f32>()?, vec![2.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn compile(&self, args: &In) -> Result<CompileReport> {
        let location = Location::from_caller(std::panic::Location::caller());
        let (_, key) = self.key(args, location)?;
        self.compiled(args, key, location).map(|c| c.report)
    }

    /// The layout the program compiled for `args` takes each input leaf
    /// in (JAX's `compiled.input_shardings`): the argument's own sharding,
    /// its `in_shardings` entry, or, for an argument given neither, the
    /// layout the partitioner chose, which each call lays it out in.
    /// `None` for a program on one device, or a layout no spec of the mesh
    /// expresses.
    ///
    /// ```
    /// use oxla::{Array, Mesh, P, NamedSharding, jit, sharding::with_sharding_constraint};
    /// # fn main() -> oxla::Result<()> {
    /// oxla::set_cpu_device_count(4)?;                      // before the first array
    /// let rows = NamedSharding::new(&Mesh::new(&[("b", 4)])?, P!["b"]);
    /// let f = jit(move |y: Array| with_sharding_constraint(&(&y * 2.0), &rows));
    /// // y comes from the host, unconstrained: the partitioner splits it too.
    /// let y = Array::from_slice(&[0.0f32; 8], &[8])?;
    /// assert_eq!(f.input_shardings(&y)?[0].as_ref().map(|s| s.spec().to_string()), Some("P('b')".into()));
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn input_shardings(&self, args: &In) -> Result<Vec<Option<NamedSharding>>> {
        let location = Location::from_caller(std::panic::Location::caller());
        let (leaves, key) = self.key(args, location)?;
        let compiled = self.compiled(args, key, location)?;
        let Executable::Spmd(program) = &compiled.executable else {
            return Ok(vec![None; leaves.len()]);
        };
        let consts = compiled.consts.len();
        Ok(leaves
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let rank = x.ndim_or_zero();
                program.parameters.get(consts + i).and_then(|hlo| {
                    crate::sharding::ShardLayout::of_hlo(&program.mesh, hlo, rank).named
                })
            })
            .collect())
    }

    fn compiled(&self, args: &In, key: CacheKey, location: Location) -> Result<Arc<Compiled>> {
        if let Some(hit) = self.cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(hit);
        }
        if explain_cache_misses() {
            crate::config::diagnostic(&format!(
                "oxla: cache miss for {}: {}",
                self.name,
                self.explain(&key)
            ));
        }
        let start = Instant::now();
        let traced = {
            let _span = tracing::info_span!("trace", function = %self.name).entered();
            trace(&self.f, args, &key.avals, location)?
        };
        let traced_at = start.elapsed();
        let (aliases, donated) = self.aliases(&traced, &key);
        let (arg_shardings, result_shardings) = self.shardings(&traced, &key, location)?;
        let mesh = oxla_lower::program_mesh(&traced.jaxpr, &arg_shardings, &result_shardings)?;
        let (executable, source, lowered_at) = match mesh {
            None => {
                let text = {
                    let _span = tracing::info_span!("lower", function = %self.name).entered();
                    oxla_lower::lower(
                        &traced.jaxpr,
                        &oxla_lower::Lowering {
                            platform: crate::runtime::lowering_platform(),
                            aliases: &aliases,
                            ..oxla_lower::Lowering::default()
                        },
                    )?
                };
                let lowered_at = start.elapsed();
                let (executable, source) =
                    crate::runtime::compile_text_on(text, &self.name, key.device)?;
                (Executable::Single(executable), source, lowered_at)
            }
            Some(desc) => {
                let known: Vec<crate::sharding::Mesh> = args
                    .flatten()
                    .0
                    .iter()
                    .filter_map(|x| x.mesh().cloned())
                    .chain(self.in_shardings.meshes())
                    .chain(self.out_shardings.meshes())
                    .collect();
                let known: Vec<&crate::sharding::Mesh> = known.iter().collect();
                let mesh = spmd::mesh_of(&desc, &known)?;
                let (arg_shardings, result_shardings) =
                    program_layouts(&traced.jaxpr, arg_shardings, result_shardings, &aliases)?;
                let lowered_at = start.elapsed();
                let (program, source) = spmd::compile(
                    &traced.jaxpr,
                    &mesh,
                    &arg_shardings,
                    &result_shardings,
                    &aliases,
                    &self.name,
                )?;
                (Executable::Spmd(program), source, lowered_at)
            }
        };
        let compiled_at = start.elapsed();
        if log_compiles() {
            log_compile(
                &self.name,
                &key,
                [traced_at, lowered_at - traced_at, compiled_at - lowered_at],
                source,
            );
        }
        let out_avals = traced
            .jaxpr
            .outvars
            .iter()
            .map(|a| traced.jaxpr.atom_aval(a).clone())
            .collect();
        let execute_options = oxla_pjrt::ExecuteOptions {
            non_donatable_input_indices: non_donatable(
                traced.consts.len(),
                key.avals.len(),
                &donated,
            ),
            ..Default::default()
        };
        let compiled = Arc::new(Compiled {
            report: CompileReport {
                trace: traced_at,
                lower: lowered_at - traced_at,
                source,
            },
            executable,
            consts: traced.consts,
            out_tree: traced.out_tree,
            out_avals,
            donated,
            execute_options,
        });
        if let (Ok(mut cache), Ok(mut order)) = (self.cache.lock(), self.order.lock()) {
            cache.insert(key.clone(), compiled.clone());
            order.push(key);
        }
        Ok(compiled)
    }

    /// Why `args` would miss the cache, against the closest earlier key
    /// (`None` if it would hit or nothing was compiled yet): the same
    /// sentence `OXLA_EXPLAIN_CACHE_MISSES=1` (or
    /// [`config::set_explain_cache_misses`](crate::config::set_explain_cache_misses))
    /// prints at each miss.
    ///
    /// ```
    /// use oxla::{Array, Static, jit};
    /// # fn main() -> oxla::Result<()> {
    /// let f = jit(|(x, n): (Array, Static<u32>)| &x * n.0 as f64);
    /// let x = Array::from_slice(&[1.0f32], &[1])?;
    /// assert_eq!(f.call((x.clone(), Static(2)))?.to_vec::<f32>()?, vec![2.0]);
    /// assert_eq!(f.explain_miss(&(x.clone(), Static(2)))?, None);
    /// assert_eq!(
    ///     f.explain_miss(&(x, Static(3)))?.as_deref(),
    ///     Some("static argument values changed from 2 to 3")
    /// );
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn explain_miss(&self, args: &In) -> Result<Option<String>> {
        let location = Location::from_caller(std::panic::Location::caller());
        let (_, key) = self.key(args, location)?;
        if self
            .cache
            .lock()
            .map(|c| c.contains_key(&key))
            .unwrap_or(false)
        {
            return Ok(None);
        }
        let seen = self.order.lock().map(|o| !o.is_empty()).unwrap_or(false);
        Ok(seen.then(|| self.explain(&key)))
    }

    fn explain(&self, key: &CacheKey) -> String {
        let order = match self.order.lock() {
            Ok(o) => o.clone(),
            Err(_) => return "the cache is unavailable".into(),
        };
        let Some(closest) = order.iter().min_by_key(|old| distance(old, key)) else {
            return "first call: nothing compiled yet".into();
        };
        explain_difference(closest, key)
    }

    /// Calls the function: compiled code on a cache hit, trace + compile on
    /// a miss. Inside another trace, the function is traced inline.
    ///
    /// The call returns once the execution is enqueued, as in JAX: the
    /// outputs' values may still be computing (reading them waits;
    /// [`Array::block_until_ready`] waits without reading). Errors of
    /// tracing, compiling or enqueuing are this call's; an `Err` returned
    /// by the function while tracing is too.
    ///
    /// A function that returns `Result<T>` gives a `Result<T>` here, not a
    /// nested one (see [`Pytree::Value`](crate::Pytree::Value)).
    #[track_caller]
    pub fn call(&self, args: In) -> Result<Out::Value> {
        let location = Location::from_caller(std::panic::Location::caller());
        if crate::trace::is_tracing() {
            return self.call_traced(args, location);
        }
        let (leaves, key) = self.key(&args, location)?;
        let on_other_device = key.device.is_some();
        let compiled = self.compiled(&args, key, location)?;
        let arrays: Vec<Array> = match &compiled.executable {
            Executable::Single(executable) => {
                let device = match on_other_device {
                    true => executable.addressable_devices().into_iter().next(),
                    false => None,
                };
                let buffers = crate::sharding::committed::buffers_on(
                    compiled.consts.iter().chain(&leaves),
                    device.as_ref(),
                    location,
                )?;
                let refs: Vec<&oxla_pjrt::Buffer> = buffers.iter().map(|b| b.get()).collect();
                let outputs = {
                    let _span = tracing::info_span!("execute", function = %self.name).entered();
                    executable
                        .execute_with(&refs, &compiled.execute_options)
                        .map_err(Error::from)?
                };
                drop(buffers);
                // The outputs are registered as made at the call's line.
                crate::ops::with_rule_location(location, || {
                    outputs
                        .into_iter()
                        .zip(&compiled.out_avals)
                        .map(|(b, aval)| Array::wrap_buffer(b, aval.clone()))
                        .collect()
                })
            }
            Executable::Spmd(program) => {
                let all: Vec<&Array> = compiled.consts.iter().chain(&leaves).collect();
                let _span = tracing::info_span!("execute", function = %self.name).entered();
                program.run(
                    &all,
                    &compiled.out_avals,
                    &compiled.execute_options,
                    location,
                )?
            }
        };
        for (leaf, what) in &compiled.donated {
            leaves[*leaf].mark_donated(what.clone());
        }
        Out::unflatten_from(&compiled.out_tree, &mut arrays.into_iter())?.into_value()
    }
}

impl<In: Pytree, Out: Pytree, F: Fn(In) -> Out> Jit<In, Out, F> {
    /// A call inside a trace (jit, grad, vmap, ...): the function is traced
    /// into a jaxpr and applied as a `pjit` equation, which every
    /// transformation sees through.
    ///
    /// Its `in_shardings` and `out_shardings` become sharding constraints
    /// on the call's operands and results (as JAX's `pjit` keeps them), so
    /// they still lay out the values inside another jit, and transform as
    /// constraints do under grad (the cotangents laid out alike) and vmap
    /// (the batch dimension unsplit).
    fn call_traced(&self, args: In, location: Location) -> Result<Out::Value> {
        let (leaves, key) = self.key(&args, location)?;
        let traced = trace(&self.f, &args, &key.avals, location)?;
        let (arg_shardings, result_shardings) =
            if self.in_shardings.is_unspecified() && self.out_shardings.is_unspecified() {
                (Vec::new(), Vec::new())
            } else {
                self.shardings(&traced, &key, location)?
            };
        let constrain = |x: Array, sharding: Option<&Option<ShardingDesc>>| -> Result<Array> {
            match sharding {
                Some(Some(sharding)) => Ok(crate::ops::bind_at(
                    oxla_core::Primitive::Sharding(sharding::Op::ShardingConstraint {
                        sharding: sharding.clone(),
                    }),
                    &[&x],
                    location,
                )?
                .remove(0)),
                Some(None) | None => Ok(x),
            }
        };
        let consts = traced.consts.len();
        let mut operands = traced.consts;
        for (i, leaf) in leaves.into_iter().enumerate() {
            operands.push(constrain(leaf, arg_shardings.get(consts + i))?);
        }
        let call = oxla_core::Primitive::Call(call::Op::Call {
            jaxpr: oxla_core::SubJaxpr::new(traced.jaxpr),
            name: self.name.as_str().into(),
        });
        let refs: Vec<&Array> = operands.iter().collect();
        let outs = crate::ops::bind_at(call, &refs, location)?
            .into_iter()
            .enumerate()
            .map(|(i, out)| constrain(out, result_shardings.get(i)))
            .collect::<Result<Vec<_>>>()?;
        Out::unflatten_from(&traced.out_tree, &mut outs.into_iter())?.into_value()
    }
}

/// The parameter and result shardings of a program that runs on a mesh:
/// constants are replicated on it; input leaves without a sharding (arrays
/// on one device, scalars) stay unconstrained, as JAX leaves them, so the
/// partitioner chooses their layout and each call lays the argument out
/// so; and a result that reuses a donated parameter's buffer gets that
/// parameter's layout unless one was asked for (XLA aliases buffers of
/// the same per-device size only). Unchanged when the program runs on one
/// device.
#[allow(clippy::type_complexity)]
fn program_layouts(
    jaxpr: &Jaxpr,
    args: Vec<Option<ShardingDesc>>,
    mut results: Vec<Option<ShardingDesc>>,
    aliases: &[(usize, usize)],
) -> Result<(Vec<Option<ShardingDesc>>, Vec<Option<ShardingDesc>>)> {
    let Some(mesh) = oxla_lower::program_mesh(jaxpr, &args, &results)? else {
        return Ok((args, results));
    };
    let consts = jaxpr.constvars.len();
    let args: Vec<Option<ShardingDesc>> = args
        .into_iter()
        .enumerate()
        .map(|(i, s)| match s {
            None if i < consts => Some(ShardingDesc::replicated(mesh.clone())),
            s => s,
        })
        .collect();
    for &(param, output) in aliases {
        if results[output].is_none() {
            results[output] = args[param].clone();
        }
    }
    Ok((args, results))
}

/// The program's argument indices (`consts` constants, then `leaves`
/// input leaves) that are not donated.
fn non_donatable(consts: usize, leaves: usize, donated: &[(usize, String)]) -> Vec<i64> {
    (0..consts + leaves)
        .filter(|&i| i < consts || !donated.iter().any(|(leaf, _)| consts + leaf == i))
        .map(|i| i as i64)
        .collect()
}

/// How different two keys are (for picking the closest earlier one).
fn distance(a: &CacheKey, b: &CacheKey) -> usize {
    let tree = usize::from(a.tree != b.tree) * 1000;
    let leaves = a.avals.iter().zip(&b.avals).filter(|(x, y)| x != y).count()
        + a.avals.len().abs_diff(b.avals.len());
    tree + leaves
        + a.shardings
            .iter()
            .zip(&b.shardings)
            .filter(|(x, y)| x != y)
            .count()
        + usize::from(a.x64 != b.x64)
        + usize::from(a.threefry_partitionable != b.threefry_partitionable)
        + usize::from(a.default_matmul_precision != b.default_matmul_precision)
        + usize::from(a.device != b.device)
}

/// A sentence per difference between an earlier key and a new one.
fn explain_difference(old: &CacheKey, new: &CacheKey) -> String {
    let mut reasons = Vec::new();
    if old.x64 != new.x64 {
        reasons.push(format!(
            "config flag x64 changed from {} to {}",
            old.x64, new.x64
        ));
    }
    if old.threefry_partitionable != new.threefry_partitionable {
        reasons.push(format!(
            "config flag threefry_partitionable changed from {} to {}",
            old.threefry_partitionable, new.threefry_partitionable
        ));
    }
    if old.default_matmul_precision != new.default_matmul_precision {
        let name = |p: Option<oxla_core::Precision>| {
            p.map_or("none".to_string(), |p| p.name().to_ascii_lowercase())
        };
        reasons.push(format!(
            "config flag default_matmul_precision changed from {} to {}",
            name(old.default_matmul_precision),
            name(new.default_matmul_precision)
        ));
    }
    if old.device != new.device {
        let name =
            |d: Option<i64>| d.map_or("the default device".to_string(), |d| format!("device {d}"));
        reasons.push(format!(
            "the arguments moved from {} to {}",
            name(old.device),
            name(new.device)
        ));
    }
    if old.tree != new.tree {
        let (old_statics, new_statics) = (statics(&old.tree), statics(&new.tree));
        if old_statics != new_statics && strip_statics(&old.tree) == strip_statics(&new.tree) {
            reasons.push(format!(
                "static argument values changed from {} to {}",
                old_statics.join(", "),
                new_statics.join(", ")
            ));
        } else {
            reasons.push(format!(
                "the input structure changed from {} to {}",
                old.tree, new.tree
            ));
        }
    } else {
        let paths = new.tree.leaf_paths();
        for (i, (a, b)) in old.avals.iter().zip(&new.avals).enumerate() {
            let path = paths.get(i).map(String::as_str).unwrap_or("");
            let where_ = format!(
                "input {i}{}",
                if path.is_empty() {
                    String::new()
                } else {
                    format!(" {path}")
                }
            );
            if a.dtype != b.dtype {
                reasons.push(format!(
                    "{where_} changed dtype from {} to {}",
                    a.dtype, b.dtype
                ));
            }
            if a.shape != b.shape {
                reasons.push(format!("{where_} changed shape from {a} to {b}"));
            }
            if a.weak_type != b.weak_type {
                reasons.push(format!(
                    "{where_} changed weak type from {} to {}",
                    a.weak_type, b.weak_type
                ));
            }
            let (was, is) = (old.shardings.get(i), new.shardings.get(i));
            if was != is {
                let text = |s: Option<&Option<ShardingDesc>>| match s {
                    Some(Some(s)) => s.to_string(),
                    _ => "one device".to_string(),
                };
                reasons.push(format!(
                    "{where_} changed sharding from {} to {}",
                    text(was),
                    text(is)
                ));
            }
        }
    }
    if reasons.is_empty() {
        "no difference from the closest earlier call was found".into()
    } else {
        reasons.join("; ")
    }
}

fn statics(tree: &TreeDef) -> Vec<String> {
    match tree {
        TreeDef::Static(v) => vec![v.repr().to_string()],
        TreeDef::Leaf | TreeDef::None => Vec::new(),
        TreeDef::Tuple(c) | TreeDef::List(c) => c.iter().flat_map(statics).collect(),
        TreeDef::Dict(c) => c.iter().flat_map(|(_, t)| statics(t)).collect(),
        TreeDef::Struct(_, c) => c.iter().flat_map(|(_, t)| statics(t)).collect(),
    }
}

fn strip_statics(tree: &TreeDef) -> TreeDef {
    match tree {
        TreeDef::Static(_) => TreeDef::Static(crate::pytree::StaticValue::new(&())),
        TreeDef::Leaf => TreeDef::Leaf,
        TreeDef::None => TreeDef::None,
        TreeDef::Tuple(c) => TreeDef::Tuple(c.iter().map(strip_statics).collect()),
        TreeDef::List(c) => TreeDef::List(c.iter().map(strip_statics).collect()),
        TreeDef::Dict(c) => TreeDef::Dict(
            c.iter()
                .map(|(k, t)| (k.clone(), strip_statics(t)))
                .collect(),
        ),
        TreeDef::Struct(n, c) => {
            TreeDef::Struct(n, c.iter().map(|(k, t)| (*k, strip_statics(t))).collect())
        }
    }
}

fn log_compile(
    name: &str,
    key: &CacheKey,
    [trace, lower, compile]: [Duration; 3],
    source: oxla_cache::Source,
) {
    let signature: Vec<String> = key.avals.iter().map(ToString::to_string).collect();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let line = match source {
        oxla_cache::Source::Compiled { .. } => format!(
            "oxla: compiled {name} for ({}): trace {:.2} ms, lower {:.2} ms, compile {:.2} ms",
            signature.join(", "),
            ms(trace),
            ms(lower),
            ms(compile)
        ),
        oxla_cache::Source::DiskHit { load, saved } => format!(
            "oxla: disk cache hit for {name} ({}): trace {:.2} ms, lower {:.2} ms, load {:.2} ms, saved {:.2} ms of compilation",
            signature.join(", "),
            ms(trace),
            ms(lower),
            ms(load),
            ms(saved)
        ),
    };
    crate::config::diagnostic(&line);
}
