//! Shardy's attributes as their text, from the encodings of Shardy's
//! `dialect/sdy/ir/bytecode.td` (facts: the codes and fields of each
//! attribute), and the order in which Shardy's ops store their properties.
//! A sharded portable artifact declares its mesh with `sdy.mesh` and its
//! parameters' shardings with `#sdy.sharding` attributes.

use super::VhloError;
use super::attributes::{Tables, escaped};
use super::encoding::Reader;

fn bad(what: impl Into<String>) -> VhloError {
    VhloError(what.into())
}

/// The inherent attributes of the Shardy ops a module may hold, in the
/// order their properties are written (sorted by name; all required).
pub(crate) fn sdy_op_attributes(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "mesh" => &["mesh", "sym_name"],
        "sharding_constraint" => &["sharding"],
        "manual_computation" => &["in_shardings", "manual_axes", "out_shardings"],
        "return" | "propagation_barrier" => &[],
        _ => return None,
    })
}

/// Shardy's symbol for factor `index`: `i` to `z`, then `z_1`, `z_2`...
fn factor_symbol(index: i64) -> String {
    match u8::try_from(index) {
        Ok(i) if i < 18 => char::from(b'i' + i).to_string(),
        _ => format!("z_{}", index - 17),
    }
}

impl Tables<'_, '_> {
    fn attr_list(&self, r: &mut Reader<'_>) -> Result<Vec<String>, VhloError> {
        let n = r.count()?;
        (0..n).map(|_| self.attr(r.index()?)).collect()
    }

    /// A tensor sharding's body, `<@mesh, [{"x"}, {}]>`, from its fields.
    fn sharding_body(&self, r: &mut Reader<'_>, with_unreduced: bool) -> Result<String, VhloError> {
        let mesh = self.attr(r.index()?)?;
        let mesh = mesh.strip_prefix("#sdy.").unwrap_or(&mesh).to_string();
        let dims = self.attr_list(r)?;
        let replicated = self.attr_list(r)?;
        let unreduced = if with_unreduced {
            self.attr_list(r)?
        } else {
            Vec::new()
        };
        let mut text = format!("<{mesh}, [{}]", dims.join(", "));
        if !replicated.is_empty() {
            text.push_str(&format!(", replicated={{{}}}", replicated.join(", ")));
        }
        if !unreduced.is_empty() {
            text.push_str(&format!(", unreduced={{{}}}", unreduced.join(", ")));
        }
        text.push('>');
        Ok(text)
    }

    /// A list of signed integers: its count, then each.
    fn signed_list(&self, r: &mut Reader<'_>) -> Result<Vec<i64>, VhloError> {
        let n = r.count()?;
        (0..n).map(|_| r.signed_varint()).collect()
    }

    /// An op's sharding rule (`#sdy.op_sharding_rule`, which JAX attaches
    /// to its LAPACK custom calls): the operands' and results' factor
    /// mappings, the factors' sizes, the special factors, and whether the
    /// rule is a custom one, as Shardy prints it.
    fn sharding_rule(&self, r: &mut Reader<'_>) -> Result<String, VhloError> {
        let sizes = self.signed_list(r)?;
        let operands = self.attr_list(r)?;
        let results = self.attr_list(r)?;
        let mut text = format!(
            "#sdy.op_sharding_rule<({})->({})",
            operands.join(", "),
            results.join(", ")
        );
        if !sizes.is_empty() {
            let sizes = sizes
                .iter()
                .enumerate()
                .map(|(i, size)| format!("{}={size}", factor_symbol(i as i64)))
                .collect::<Vec<_>>();
            text.push_str(&format!(" {{{}}}", sizes.join(", ")));
        }
        for kind in [
            "reduction",
            "need_replication",
            "permutation",
            "blocked_propagation",
        ] {
            let factors = self.signed_list(r)?;
            if !factors.is_empty() {
                let symbols = factors.into_iter().map(factor_symbol).collect::<Vec<_>>();
                text.push_str(&format!(" {kind}={{{}}}", symbols.join(", ")));
            }
        }
        if r.byte()? != 0 {
            text.push_str(", custom");
        }
        text.push('>');
        Ok(text)
    }

    /// Shardy attribute `code`, its fields read from `r`.
    pub(crate) fn decode_sdy_attr(
        &self,
        code: u64,
        r: &mut Reader<'_>,
    ) -> Result<String, VhloError> {
        Ok(match code {
            0 => format!("#sdy<manual_axes{{{}}}>", self.attr_list(r)?.join(", ")),
            1 => {
                let name = escaped(self.bytecode_string(r.index()?)?);
                format!("{name}={}", r.signed_varint()?)
            }
            2 => {
                let axes = self.attr_list(r)?;
                let n = r.count()?;
                let ids = (0..n)
                    .map(|_| r.signed_varint().map(|v| v.to_string()))
                    .collect::<Result<Vec<_>, _>>()?;
                if ids.is_empty() {
                    format!("#sdy.mesh<[{}]>", axes.join(", "))
                } else {
                    format!(
                        "#sdy.mesh<[{}], device_ids=[{}]>",
                        axes.join(", "),
                        ids.join(", ")
                    )
                }
            }
            3 => {
                let pre = r.signed_varint()?;
                let size = r.signed_varint()?;
                format!("({pre}){size}")
            }
            4 => {
                let name = escaped(self.bytecode_string(r.index()?)?);
                let (index, present) = r.varint_with_flag()?;
                if present {
                    format!("{name}:{}", self.attr(index as usize)?)
                } else {
                    name
                }
            }
            5 => {
                let mut axes = self.attr_list(r)?;
                let closed = r.byte()? != 0;
                let (priority, has_priority) = r.varint_with_flag()?;
                if !closed {
                    axes.push("?".to_string());
                }
                let mut text = format!("{{{}}}", axes.join(", "));
                if has_priority {
                    text.push_str(&format!("p{priority}"));
                }
                text
            }
            6 => format!("#sdy.sharding{}", self.sharding_body(r, false)?),
            15 => format!("#sdy.sharding{}", self.sharding_body(r, true)?),
            7 | 16 => {
                let shardings = self
                    .attr_list(r)?
                    .into_iter()
                    .map(|s| s.strip_prefix("#sdy.sharding").unwrap_or(&s).to_string())
                    .collect::<Vec<_>>();
                format!("#sdy.sharding_per_value<[{}]>", shardings.join(", "))
            }
            // A dimension's factors, as the rule's symbols run together.
            8 => self
                .signed_list(r)?
                .into_iter()
                .map(factor_symbol)
                .collect::<String>(),
            // A tensor's dimensions.
            9 => format!("[{}]", self.attr_list(r)?.join(", ")),
            10 => self.sharding_rule(r)?,
            other => {
                return Err(bad(format!(
                    "Shardy attribute code {other} (axis lists, all-to-all parameters, \
                     non-sum reductions) is not read"
                )));
            }
        })
    }
}
