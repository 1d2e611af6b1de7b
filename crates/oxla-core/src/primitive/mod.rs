//! The closed set of primitives, each with its parameters.
//!
//! Every transformation is a `match` over [`Primitive`] in its own module
//! (shape rules here in oxla-core, lowering in oxla-lower): adding a variant
//! makes the compiler list every rule still missing.

use std::fmt;

use crate::subjaxpr::SubJaxpr;

pub mod call;
pub mod collective;
pub mod contract;
pub mod control;
pub mod elementwise;
pub mod host;
pub mod index;
pub mod marker;
pub mod reduce;
pub mod shape;
pub mod sharding;

pub use call::RematPolicy;
pub use contract::{ConvDimensionNumbers, Precision};
pub use elementwise::{BinaryOp, Comparison, TypeClass, UnaryOp};
pub use index::{GatherDimensionNumbers, GatherMode, ScatterDimensionNumbers, ScatterOp};
pub use reduce::{ArgOp, CumulativeOp, ReduceOp, WindowOp};

/// A primitive operation with its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// An elementwise primitive.
    Elementwise(elementwise::Op),
    /// A shape primitive.
    Shape(shape::Op),
    /// An indexing primitive.
    Index(index::Op),
    /// A reduction.
    Reduce(reduce::Op),
    /// A contraction.
    Contract(contract::Op),
    /// A call primitive.
    Call(call::Op),
    /// A control-flow primitive.
    Control(control::Op),
    /// A collective (or `pvary`).
    Collective(collective::Op),
    /// A sharding primitive.
    Sharding(sharding::Op),
    /// A host primitive.
    Host(host::Op),
    /// A marker primitive.
    Marker(marker::Op),
}

impl Primitive {
    /// Whether an equation of this primitive is an effect the program must
    /// keep even when nothing reads its results: an effectful host callback
    /// (`io_callback`, `debug::print`), or a primitive whose jaxprs (a
    /// loop's body, a branch) hold one.
    pub fn is_effectful(&self) -> bool {
        if let Primitive::Host(host::Op::HostCallback { callback, .. }) = self {
            return callback.effectful;
        }
        let mut found = false;
        self.params(0, &mut |jaxpr, _| {
            found |= jaxpr.is_effectful();
            String::new()
        });
        found
    }

    /// JAX's name of the primitive (as jaxprs print it).
    pub fn name(&self) -> &'static str {
        match self {
            Primitive::Elementwise(elementwise::Op::Unary(op)) => op.name(),
            Primitive::Elementwise(elementwise::Op::Binary(op)) => op.name(),
            Primitive::Elementwise(elementwise::Op::Compare(c)) => c.name(),
            Primitive::Elementwise(elementwise::Op::IntegerPow { .. }) => "integer_pow",
            Primitive::Elementwise(elementwise::Op::SelectN) => "select_n",
            Primitive::Elementwise(elementwise::Op::Clamp) => "clamp",
            Primitive::Elementwise(elementwise::Op::ConvertElementType { .. }) => {
                "convert_element_type"
            }
            Primitive::Shape(shape::Op::Iota { .. }) => "iota",
            Primitive::Shape(shape::Op::BroadcastInDim { .. }) => "broadcast_in_dim",
            Primitive::Shape(shape::Op::Reshape { .. }) => "reshape",
            Primitive::Shape(shape::Op::Transpose { .. }) => "transpose",
            Primitive::Shape(shape::Op::Squeeze { .. }) => "squeeze",
            Primitive::Shape(shape::Op::Rev { .. }) => "rev",
            Primitive::Shape(shape::Op::Concatenate { .. }) => "concatenate",
            Primitive::Shape(shape::Op::Split { .. }) => "split",
            Primitive::Shape(shape::Op::Pad { .. }) => "pad",
            Primitive::Index(index::Op::Slice { .. }) => "slice",
            Primitive::Reduce(reduce::Op::Reduce { op, .. }) => op.name(),
            Primitive::Reduce(reduce::Op::ReduceWith { .. }) => "reduce",
            Primitive::Index(index::Op::DynamicSlice { .. }) => "dynamic_slice",
            Primitive::Index(index::Op::DynamicUpdateSlice) => "dynamic_update_slice",
            Primitive::Elementwise(elementwise::Op::BitcastConvertType { .. }) => {
                "bitcast_convert_type"
            }
            Primitive::Reduce(reduce::Op::Cumulative { op, .. }) => op.name(),
            Primitive::Reduce(reduce::Op::ReduceWindow {
                op: WindowOp::Sum, ..
            }) => "reduce_window_sum",
            Primitive::Reduce(reduce::Op::ReduceWindow {
                op: WindowOp::Max, ..
            }) => "reduce_window_max",
            Primitive::Reduce(reduce::Op::ReduceWindow {
                op: WindowOp::Min, ..
            }) => "reduce_window_min",
            Primitive::Reduce(reduce::Op::SelectAndScatterAdd { .. }) => "select_and_scatter_add",
            Primitive::Reduce(reduce::Op::ArgMinMax { op: ArgOp::Max, .. }) => "argmax",
            Primitive::Reduce(reduce::Op::ArgMinMax { op: ArgOp::Min, .. }) => "argmin",
            Primitive::Reduce(reduce::Op::Sort { .. }) => "sort",
            Primitive::Reduce(reduce::Op::TopK { .. }) => "top_k",
            Primitive::Contract(contract::Op::ConvGeneralDilated { .. }) => "conv_general_dilated",
            Primitive::Index(index::Op::Gather { .. }) => "gather",
            Primitive::Index(index::Op::Scatter {
                op: ScatterOp::Set, ..
            }) => "scatter",
            Primitive::Index(index::Op::Scatter {
                op: ScatterOp::Add, ..
            }) => "scatter-add",
            Primitive::Index(index::Op::Scatter {
                op: ScatterOp::Mul, ..
            }) => "scatter-mul",
            Primitive::Index(index::Op::Scatter {
                op: ScatterOp::Min, ..
            }) => "scatter-min",
            Primitive::Index(index::Op::Scatter {
                op: ScatterOp::Max, ..
            }) => "scatter-max",
            Primitive::Contract(contract::Op::DotGeneral { .. }) => "dot_general",
            Primitive::Call(call::Op::Call { .. }) => "pjit",
            Primitive::Call(call::Op::CallExported { .. }) => "call_exported",
            Primitive::Host(host::Op::HostCallback { callback, .. }) => {
                if callback.effectful {
                    "io_callback"
                } else {
                    "pure_callback"
                }
            }
            Primitive::Marker(marker::Op::StopGradient) => "stop_gradient",
            Primitive::Marker(marker::Op::OptimizationBarrier) => "optimization_barrier",
            Primitive::Marker(marker::Op::CheckpointName { .. }) => "name",
            Primitive::Sharding(sharding::Op::ShardingConstraint { .. }) => "sharding_constraint",
            Primitive::Sharding(sharding::Op::ShardMap { .. }) => "shard_map",
            Primitive::Collective(collective::Op::Pvary { .. }) => "pvary",
            Primitive::Collective(collective::Op::AllReduce {
                op: ReduceOp::Max, ..
            }) => "pmax",
            Primitive::Collective(collective::Op::AllReduce {
                op: ReduceOp::Min, ..
            }) => "pmin",
            Primitive::Collective(collective::Op::AllReduce { .. }) => "psum",
            Primitive::Collective(collective::Op::AllGather {
                invariant: false, ..
            }) => "all_gather",
            Primitive::Collective(collective::Op::AllGather {
                invariant: true, ..
            }) => "all_gather_invariant",
            Primitive::Collective(collective::Op::ReduceScatter { .. }) => "reduce_scatter",
            Primitive::Collective(collective::Op::AllToAll { .. }) => "all_to_all",
            Primitive::Collective(collective::Op::Ppermute { .. }) => "ppermute",
            Primitive::Collective(collective::Op::AxisIndex { .. }) => "axis_index",
            Primitive::Call(call::Op::Remat { .. }) => "checkpoint",
            Primitive::Call(call::Op::CustomJvpCall { .. }) => "custom_jvp_call",
            Primitive::Call(call::Op::CustomVjpCall { .. }) => "custom_vjp_call",
            Primitive::Call(call::Op::CustomLin { .. }) => "custom_lin",
            Primitive::Control(control::Op::Cond { .. }) => "cond",
            Primitive::Control(control::Op::While { .. }) => "while",
            Primitive::Control(control::Op::Scan { .. }) => "scan",
        }
    }

    /// The jaxpr a call-like primitive carries.
    pub fn sub_jaxpr(&self) -> Option<&SubJaxpr> {
        match self {
            Primitive::Call(call::Op::Call { jaxpr, .. })
            | Primitive::Call(call::Op::Remat { jaxpr, .. })
            | Primitive::Call(call::Op::CustomJvpCall { jaxpr, .. })
            | Primitive::Call(call::Op::CustomVjpCall { jaxpr, .. }) => Some(jaxpr),
            _ => None,
        }
    }

    /// The named axes a collective runs over (`None` for other primitives).
    pub fn axis_group(&self) -> Option<&crate::sharding::AxisGroup> {
        match self {
            Primitive::Collective(collective::Op::AllReduce { group, .. })
            | Primitive::Collective(collective::Op::AllGather { group, .. })
            | Primitive::Collective(collective::Op::ReduceScatter { group, .. })
            | Primitive::Collective(collective::Op::AllToAll { group, .. })
            | Primitive::Collective(collective::Op::Ppermute { group, .. })
            | Primitive::Collective(collective::Op::AxisIndex { group })
            | Primitive::Collective(collective::Op::Pvary { group }) => Some(group),
            _ => None,
        }
    }

    /// The parameters as jaxprs print them (`[axes=(0,)]`), empty if none.
    pub fn params_string(&self) -> String {
        let params = self.params(0, &mut |j, _| indent(&j.to_string()));
        if params.is_empty() {
            String::new()
        } else {
            format!("[{}]", params.join(" "))
        }
    }

    /// Whether the primitive carries jaxprs (printed on lines of their own).
    pub fn has_nested_jaxprs(&self) -> bool {
        let mut found = false;
        self.params(0, &mut |_, _| {
            found = true;
            String::new()
        });
        found
    }

    /// The parameters as jaxprs print them (`axes=(0,)`), nested jaxprs
    /// formatted by `nested(jaxpr, column)`, `column` being where the
    /// parameter starts (`pad`, or deeper inside a list of branches).
    pub fn params(
        &self,
        pad: usize,
        nested: &mut dyn FnMut(&crate::jaxpr::Jaxpr, usize) -> String,
    ) -> Vec<String> {
        let tuple = |d: &[i64]| match d.len() {
            1 => format!("({},)", d[0]),
            _ => format!(
                "({})",
                d.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            ),
        };
        let list = |d: &[i64]| {
            format!(
                "[{}]",
                d.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            )
        };
        let params: Vec<String> = match self {
            Primitive::Elementwise(elementwise::Op::Unary(_))
            | Primitive::Elementwise(elementwise::Op::Binary(_))
            | Primitive::Elementwise(elementwise::Op::Compare(_))
            | Primitive::Elementwise(elementwise::Op::SelectN)
            | Primitive::Elementwise(elementwise::Op::Clamp)
            | Primitive::Index(index::Op::DynamicUpdateSlice)
            | Primitive::Marker(marker::Op::StopGradient)
            | Primitive::Marker(marker::Op::OptimizationBarrier) => vec![],
            Primitive::Call(call::Op::Call { jaxpr, name }) => vec![
                format!("jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("name={name}"),
            ],
            Primitive::Marker(marker::Op::CheckpointName { name }) => vec![format!("name={name}")],
            Primitive::Sharding(sharding::Op::ShardingConstraint { sharding }) => {
                vec![format!("sharding={sharding}")]
            }
            Primitive::Collective(collective::Op::Pvary { group }) => {
                let names: Vec<String> = group.axes.iter().map(|a| format!("'{a}'")).collect();
                vec![format!("axes=({},)", names.join(", "))]
            }
            Primitive::Sharding(sharding::Op::ShardMap {
                jaxpr,
                in_shardings,
                out_shardings,
                check_vma,
            }) => {
                let specs = |s: &[crate::sharding::ShardingDesc]| {
                    let texts: Vec<String> = s.iter().map(|d| d.spec_text()).collect();
                    format!("({},)", texts.join(", "))
                };
                vec![
                    format!("jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                    format!(
                        "mesh={}",
                        in_shardings
                            .first()
                            .or(out_shardings.first())
                            .map(|s| s.mesh.to_string())
                            .unwrap_or_default()
                    ),
                    format!("in_specs={}", specs(in_shardings)),
                    format!("out_specs={}", specs(out_shardings)),
                    format!("check_vma={}", if *check_vma { "True" } else { "False" }),
                ]
            }
            Primitive::Collective(collective::Op::AllReduce { group, .. }) => vec![
                format!(
                    "axes=({}{})",
                    group
                        .axes
                        .iter()
                        .map(|a| format!("'{a}'"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if group.axes.len() == 1 { "," } else { "" }
                ),
                format!("axis_index_groups={}", group.index_groups_text()),
            ],
            Primitive::Collective(collective::Op::AllGather {
                group,
                dim,
                tiled,
                invariant,
            }) => [
                Some(format!("all_gather_dimension={dim}")),
                (!invariant).then(|| format!("axis_index_groups={}", group.index_groups_text())),
                Some(format!("axis_name={}", group.names())),
                Some(format!("axis_size={}", group.size())),
                Some(format!("tiled={}", if *tiled { "True" } else { "False" })),
            ]
            .into_iter()
            .flatten()
            .collect(),
            Primitive::Collective(collective::Op::ReduceScatter { group, dim, tiled }) => vec![
                format!("axis_name={}", group.names()),
                format!("scatter_dimension={dim}"),
                format!("tiled={}", if *tiled { "True" } else { "False" }),
            ],
            Primitive::Collective(collective::Op::AllToAll {
                group,
                split_dim,
                concat_dim,
            }) => vec![
                format!("axis_name={}", group.names()),
                format!("concat_axis={concat_dim}"),
                format!("split_axis={split_dim}"),
            ],
            Primitive::Collective(collective::Op::Ppermute { group, perm }) => vec![
                format!("axis_name={}", group.names()),
                format!(
                    "perm=({})",
                    perm.iter()
                        .map(|(a, b)| format!("({a}, {b})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ],
            Primitive::Collective(collective::Op::AxisIndex { group }) => {
                vec![format!("axis_name={}", group.names())]
            }
            Primitive::Call(call::Op::Remat {
                jaxpr,
                policy,
                prevent_cse,
            }) => vec![
                format!("jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("policy={}", policy.name()),
                format!(
                    "prevent_cse={}",
                    if *prevent_cse { "True" } else { "False" }
                ),
            ],
            Primitive::Call(call::Op::CallExported { function }) => {
                vec![format!("name={}", function.name())]
            }
            Primitive::Host(host::Op::HostCallback { callback, .. }) => {
                vec![format!("callback={callback}")]
            }
            Primitive::Call(call::Op::CustomJvpCall { jaxpr, rule }) => vec![
                format!("call_jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("jvp={}", rule.name()),
            ],
            Primitive::Call(call::Op::CustomVjpCall { jaxpr, rule }) => vec![
                format!("call_jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("fwd_bwd={}", rule.name()),
            ],
            Primitive::Call(call::Op::CustomLin {
                rule,
                num_residuals,
                ..
            }) => vec![
                format!("bwd={}", rule.name()),
                format!("num_res={num_residuals}"),
            ],
            Primitive::Control(control::Op::Cond { branches }) => vec![format!(
                "branches=(\n{}\n{})",
                branches
                    .iter()
                    .map(|b| format!("{}{}", " ".repeat(pad + 2), nested(b.jaxpr(), pad + 2)))
                    .collect::<Vec<_>>()
                    .join("\n"),
                " ".repeat(pad)
            )],
            Primitive::Control(control::Op::While {
                cond_jaxpr,
                body_jaxpr,
                cond_nconsts,
                body_nconsts,
            }) => vec![
                format!("body_jaxpr={}", nested(body_jaxpr.jaxpr(), pad)),
                format!("body_nconsts={body_nconsts}"),
                format!("cond_jaxpr={}", nested(cond_jaxpr.jaxpr(), pad)),
                format!("cond_nconsts={cond_nconsts}"),
            ],
            Primitive::Control(control::Op::Scan {
                jaxpr,
                num_consts,
                num_carry,
                length,
                reverse,
                unroll,
            }) => vec![
                format!("jaxpr={}", nested(jaxpr.jaxpr(), pad)),
                format!("length={length}"),
                format!("num_carry={num_carry}"),
                format!("num_consts={num_consts}"),
                format!("reverse={}", if *reverse { "True" } else { "False" }),
                format!("unroll={unroll}"),
            ],
            Primitive::Index(index::Op::DynamicSlice { slice_sizes }) => {
                vec![format!("slice_sizes={}", tuple(slice_sizes))]
            }
            Primitive::Elementwise(elementwise::Op::BitcastConvertType { new_dtype }) => {
                vec![format!("new_dtype={}", new_dtype.numpy_name())]
            }
            Primitive::Reduce(reduce::Op::Cumulative { axis, reverse, .. }) => vec![
                format!("axis={axis}"),
                format!("reverse={}", if *reverse { "True" } else { "False" }),
            ],
            Primitive::Reduce(reduce::Op::ReduceWindow {
                window_dimensions,
                window_strides,
                padding,
                base_dilation,
                window_dilation,
                ..
            }) => vec![
                format!("base_dilation={}", tuple(base_dilation)),
                format!(
                    "padding=({})",
                    padding
                        .iter()
                        .map(|(l, h)| format!("({l}, {h})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                format!("window_dilation={}", tuple(window_dilation)),
                format!("window_dimensions={}", tuple(window_dimensions)),
                format!("window_strides={}", tuple(window_strides)),
            ],
            Primitive::Reduce(reduce::Op::SelectAndScatterAdd {
                window_dimensions,
                window_strides,
                padding,
            }) => vec![
                format!(
                    "padding=({})",
                    padding
                        .iter()
                        .map(|(l, h)| format!("({l}, {h})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "select_prim=ge".into(),
                format!("window_dimensions={}", tuple(window_dimensions)),
                format!("window_strides={}", tuple(window_strides)),
            ],
            Primitive::Reduce(reduce::Op::ArgMinMax {
                axis, index_dtype, ..
            }) => vec![
                format!("axes=({axis},)"),
                format!("index_dtype={}", index_dtype.numpy_name()),
            ],
            Primitive::Reduce(reduce::Op::Sort {
                dimension,
                is_stable,
                num_keys,
            }) => vec![
                format!("dimension={dimension}"),
                format!("is_stable={}", if *is_stable { "True" } else { "False" }),
                format!("num_keys={num_keys}"),
            ],
            Primitive::Reduce(reduce::Op::TopK { k }) => vec![format!("k={k}")],
            Primitive::Index(index::Op::Gather {
                dimension_numbers: d,
                slice_sizes,
                mode,
                fill_value,
            }) => vec![
                format!(
                    "dimension_numbers=GatherDimensionNumbers(offset_dims={}, collapsed_slice_dims={}, start_index_map={}, operand_batching_dims=(), start_indices_batching_dims=())",
                    tuple(&d.offset_dims),
                    tuple(&d.collapsed_slice_dims),
                    tuple(&d.start_index_map)
                ),
                format!(
                    "fill_value={}",
                    match mode {
                        GatherMode::Fill => fill_value.to_string(),
                        GatherMode::Clip | GatherMode::PromiseInBounds => "None".into(),
                    }
                ),
                "indices_are_sorted=False".into(),
                format!(
                    "mode=GatherScatterMode.{}",
                    match mode {
                        GatherMode::Clip => "CLIP",
                        GatherMode::Fill => "FILL_OR_DROP",
                        GatherMode::PromiseInBounds => "PROMISE_IN_BOUNDS",
                    }
                ),
                format!("slice_sizes={}", tuple(slice_sizes)),
                "unique_indices=False".into(),
            ],
            Primitive::Index(index::Op::Scatter {
                dimension_numbers: d,
                ..
            }) => vec![
                format!(
                    "dimension_numbers=ScatterDimensionNumbers(update_window_dims={}, inserted_window_dims={}, scatter_dims_to_operand_dims={}, operand_batching_dims=(), scatter_indices_batching_dims=())",
                    tuple(&d.update_window_dims),
                    tuple(&d.inserted_window_dims),
                    tuple(&d.scatter_dims_to_operand_dims)
                ),
                "indices_are_sorted=False".into(),
                "mode=GatherScatterMode.FILL_OR_DROP".into(),
                "unique_indices=False".into(),
            ],
            Primitive::Contract(contract::Op::ConvGeneralDilated {
                window_strides,
                padding,
                lhs_dilation,
                rhs_dilation,
                dimension_numbers,
                feature_group_count,
                batch_group_count,
                preferred_element_type,
            }) => vec![
                format!("batch_group_count={batch_group_count}"),
                format!(
                    "dimension_numbers=ConvDimensionNumbers(lhs_spec={}, rhs_spec={}, out_spec={})",
                    tuple(&dimension_numbers.lhs_spec),
                    tuple(&dimension_numbers.rhs_spec),
                    tuple(&dimension_numbers.out_spec)
                ),
                format!("feature_group_count={feature_group_count}"),
                format!("lhs_dilation={}", tuple(lhs_dilation)),
                format!(
                    "padding=({})",
                    padding
                        .iter()
                        .map(|(l, h)| format!("({l}, {h})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                format!(
                    "preferred_element_type={}",
                    preferred_element_type.map_or("None", |d| d.numpy_name())
                ),
                format!("rhs_dilation={}", tuple(rhs_dilation)),
                format!("window_strides={}", tuple(window_strides)),
            ],
            Primitive::Elementwise(elementwise::Op::IntegerPow { y }) => vec![format!("y={y}")],
            Primitive::Elementwise(elementwise::Op::ConvertElementType {
                new_dtype,
                weak_type,
            }) => vec![
                format!("new_dtype={}", new_dtype.numpy_name()),
                format!("weak_type={}", if *weak_type { "True" } else { "False" }),
            ],
            Primitive::Shape(shape::Op::Iota {
                dtype,
                shape,
                dimension,
            }) => vec![
                format!("dimension={dimension}"),
                format!("dtype={}", dtype.numpy_name()),
                "sharding=None".into(),
                format!("shape={}", tuple(shape)),
            ],
            // JAX prints only the dims (the shape is the result's), and
            // nothing when a scalar is broadcast.
            Primitive::Shape(shape::Op::BroadcastInDim {
                broadcast_dimensions,
                ..
            }) if broadcast_dimensions.is_empty() => Vec::new(),
            Primitive::Shape(shape::Op::BroadcastInDim {
                broadcast_dimensions,
                ..
            }) => vec![format!(
                "broadcast_dimensions={}",
                tuple(broadcast_dimensions)
            )],
            Primitive::Shape(shape::Op::Reshape { new_sizes }) => vec![
                "dimensions=None".into(),
                format!("new_sizes={}", tuple(new_sizes)),
                "sharding=None".into(),
            ],
            Primitive::Shape(shape::Op::Transpose { permutation }) => {
                vec![format!("permutation={}", tuple(permutation))]
            }
            Primitive::Shape(shape::Op::Squeeze { dimensions })
            | Primitive::Shape(shape::Op::Rev { dimensions }) => {
                vec![format!("dimensions={}", tuple(dimensions))]
            }
            Primitive::Shape(shape::Op::Concatenate { dimension }) => {
                vec![format!("dimension={dimension}")]
            }
            Primitive::Shape(shape::Op::Split { axis, sizes }) => {
                vec![format!("axis={axis}"), format!("sizes={}", tuple(sizes))]
            }
            Primitive::Shape(shape::Op::Pad { config }) => vec![format!(
                "padding_config=({})",
                config
                    .iter()
                    .map(|(l, h, i)| format!("({l}, {h}, {i})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )],
            Primitive::Index(index::Op::Slice {
                start_indices,
                limit_indices,
                strides,
            }) => vec![
                format!("limit_indices={}", tuple(limit_indices)),
                format!("start_indices={}", tuple(start_indices)),
                format!(
                    "strides={}",
                    if strides.iter().all(|&s| s == 1) {
                        "None".to_string()
                    } else {
                        tuple(strides)
                    }
                ),
            ],
            Primitive::Reduce(reduce::Op::Reduce {
                op: ReduceOp::Sum,
                axes,
            }) => {
                vec![format!("axes={}", tuple(axes)), "out_sharding=None".into()]
            }
            Primitive::Reduce(reduce::Op::Reduce { axes, .. }) => {
                vec![format!("axes={}", tuple(axes))]
            }
            Primitive::Reduce(reduce::Op::ReduceWith { computation, axes }) => vec![
                format!("dimensions={}", tuple(axes)),
                format!("jaxpr={}", nested(computation.jaxpr(), pad)),
            ],
            Primitive::Contract(contract::Op::DotGeneral {
                lhs_contracting,
                rhs_contracting,
                lhs_batch,
                rhs_batch,
                preferred_element_type,
                precision,
            }) => {
                let mut params = vec![format!(
                    "dimension_numbers=(({}, {}), ({}, {}))",
                    list(lhs_contracting),
                    list(rhs_contracting),
                    list(lhs_batch),
                    list(rhs_batch)
                )];
                // JAX prints the precision only when one is set.
                if let Some(p) = precision {
                    params.push(format!(
                        "precision=(Precision.{0}, Precision.{0})",
                        p.name()
                    ));
                }
                params.push(format!(
                    "preferred_element_type={}",
                    preferred_element_type.map_or("None", |d| d.numpy_name())
                ));
                params
            }
        };
        params
    }
}

/// A nested jaxpr's text indented under its equation.
fn indent(text: &str) -> String {
    text.replace('\n', "\n    ")
}

impl fmt::Display for Primitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.name(), self.params_string())
    }
}
