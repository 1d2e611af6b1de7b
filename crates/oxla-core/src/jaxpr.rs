//! Jaxprs: typed variables, equations `outs = prim[params](ins)` with the
//! source line that made them, closed-over constants, and a printer in
//! JAX's syntax.

use crate::varmap::VarMap;
use std::fmt;

use crate::aval::Aval;
use crate::dtype::DType;
use crate::primitive::Primitive;

/// A variable: a dense index into [`Jaxpr::avals`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Var(pub u32);

/// A scalar constant written inline in an equation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A float.
    Float(f64),
    /// A complex number: real and imaginary parts.
    Complex(f64, f64),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::UInt(v) => write!(f, "{v}"),
            Scalar::Float(v) if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e16 => {
                write!(f, "{v:.1}")
            }
            Scalar::Float(v) => write!(f, "{v}"),
            // Python's repr of a complex: `(1+2j)`, `2j`, `(1-0j)`.
            Scalar::Complex(re, im) if *re == 0.0 && re.is_sign_positive() => {
                write!(f, "{}j", Scalar::Float(*im))
            }
            Scalar::Complex(re, im) => {
                let sign = if im.is_sign_negative() { '-' } else { '+' };
                write!(
                    f,
                    "({}{sign}{}j)",
                    Scalar::Float(*re),
                    Scalar::Float(im.abs())
                )
            }
        }
    }
}

impl Scalar {
    /// The value as an f64 (false/true as 0/1; integers rounded to the
    /// nearest f64; a complex number's real part, as NumPy casts it).
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => f64::from(u8::from(b)),
            Scalar::Int(i) => i as f64,
            Scalar::UInt(u) => u as f64,
            Scalar::Float(f) => f,
            Scalar::Complex(re, _) => re,
        }
    }

    /// The value as a complex number's parts (a real value's imaginary part
    /// is 0).
    pub fn complex_parts(self) -> (f64, f64) {
        match self {
            Scalar::Complex(re, im) => (re, im),
            Scalar::Bool(_) | Scalar::Int(_) | Scalar::UInt(_) | Scalar::Float(_) => {
                (self.as_f64(), 0.0)
            }
        }
    }

    /// The value as an i128, which holds every i64 and u64 exactly (floats
    /// and a complex number's real part truncated toward zero,
    /// saturating).
    pub fn as_i128(self) -> i128 {
        match self {
            Scalar::Bool(b) => i128::from(b),
            Scalar::Int(i) => i128::from(i),
            Scalar::UInt(u) => i128::from(u),
            Scalar::Float(f) | Scalar::Complex(f, _) => f as i128,
        }
    }

    /// The least value of `dtype`: -inf for floats, false, or the integer
    /// minimum (the identity of `max`).
    pub fn lowest(dtype: DType) -> Scalar {
        match dtype {
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::C64 | DType::C128 => {
                Scalar::Float(f64::NEG_INFINITY)
            }
            DType::Bool => Scalar::Bool(false),
            DType::I8 => Scalar::Int(i64::from(i8::MIN)),
            DType::I16 => Scalar::Int(i64::from(i16::MIN)),
            DType::I32 => Scalar::Int(i64::from(i32::MIN)),
            DType::I64 => Scalar::Int(i64::MIN),
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => Scalar::UInt(0),
        }
    }

    /// The greatest value of `dtype`: +inf for floats, true, or the integer
    /// maximum (the identity of `min`).
    pub fn highest(dtype: DType) -> Scalar {
        match dtype {
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::C64 | DType::C128 => {
                Scalar::Float(f64::INFINITY)
            }
            DType::Bool => Scalar::Bool(true),
            DType::I8 => Scalar::Int(i64::from(i8::MAX)),
            DType::I16 => Scalar::Int(i64::from(i16::MAX)),
            DType::I32 => Scalar::Int(i64::from(i32::MAX)),
            DType::I64 => Scalar::Int(i64::MAX),
            DType::U8 => Scalar::UInt(u64::from(u8::MAX)),
            DType::U16 => Scalar::UInt(u64::from(u16::MAX)),
            DType::U32 => Scalar::UInt(u64::from(u32::MAX)),
            DType::U64 => Scalar::UInt(u64::MAX),
        }
    }
}

/// A [`Scalar`] that can be hashed and compared exactly (floats by their
/// bits), for primitive parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarKey {
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A float, by its bits.
    FloatBits(u64),
    /// A complex number, by its parts' bits.
    ComplexBits(u64, u64),
}

impl ScalarKey {
    /// The key of a scalar.
    pub fn of(value: Scalar) -> Self {
        match value {
            Scalar::Bool(b) => ScalarKey::Bool(b),
            Scalar::Int(i) => ScalarKey::Int(i),
            Scalar::UInt(u) => ScalarKey::UInt(u),
            Scalar::Float(f) => ScalarKey::FloatBits(f.to_bits()),
            Scalar::Complex(re, im) => ScalarKey::ComplexBits(re.to_bits(), im.to_bits()),
        }
    }

    /// The scalar back.
    pub fn value(self) -> Scalar {
        match self {
            ScalarKey::Bool(b) => Scalar::Bool(b),
            ScalarKey::Int(i) => Scalar::Int(i),
            ScalarKey::UInt(u) => Scalar::UInt(u),
            ScalarKey::FloatBits(b) => Scalar::Float(f64::from_bits(b)),
            ScalarKey::ComplexBits(re, im) => {
                Scalar::Complex(f64::from_bits(re), f64::from_bits(im))
            }
        }
    }
}

impl fmt::Display for ScalarKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.value())
    }
}

/// A scalar literal with its (scalar) aval.
#[derive(Debug, Clone, PartialEq)]
pub struct Literal {
    /// The value.
    pub value: Scalar,
    /// Its type (rank 0).
    pub aval: Aval,
}

/// An equation operand: a variable or a literal.
#[derive(Debug, Clone, PartialEq)]
pub enum Atom {
    /// A variable.
    Var(Var),
    /// A scalar literal.
    Literal(Literal),
}

/// Where in the user's Rust code an equation was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    /// Source file.
    pub file: &'static str,
    /// Line.
    pub line: u32,
    /// Column.
    pub column: u32,
}

impl Location {
    /// The location of a `std::panic::Location` (from `#[track_caller]`).
    pub fn from_caller(l: &'static std::panic::Location<'static>) -> Self {
        Self {
            file: l.file(),
            line: l.line(),
            column: l.column(),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// One equation.
#[derive(Debug, Clone, PartialEq)]
pub struct Equation {
    /// The primitive and its parameters.
    pub primitive: Primitive,
    /// The operands.
    pub inputs: Vec<Atom>,
    /// The results.
    pub outputs: Vec<Var>,
    /// The user's source line.
    pub location: Option<Location>,
}

/// A function in oxla's IR.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Jaxpr {
    /// The aval of each variable, indexed by `Var.0`.
    pub avals: Vec<Aval>,
    /// Closed-over constants (passed as leading arguments when run).
    pub constvars: Vec<Var>,
    /// Parameters.
    pub invars: Vec<Var>,
    /// Equations in order.
    pub eqns: Vec<Equation>,
    /// Results.
    pub outvars: Vec<Atom>,
}

impl Jaxpr {
    /// Whether running the jaxpr has an effect that must happen in program
    /// order (an io callback or debug print, here or in a nested body).
    pub fn is_effectful(&self) -> bool {
        self.eqns.iter().any(|e| e.primitive.is_effectful())
    }

    /// The aval of a variable.
    pub fn aval(&self, v: Var) -> &Aval {
        &self.avals[v.0 as usize]
    }

    /// The types of the parameters (constvars, then invars).
    pub fn in_avals(&self) -> Vec<Aval> {
        self.constvars
            .iter()
            .chain(&self.invars)
            .map(|v| self.aval(*v).clone())
            .collect()
    }

    /// The types of the results.
    pub fn out_avals(&self) -> Vec<Aval> {
        self.outvars
            .iter()
            .map(|o| self.atom_aval(o).clone())
            .collect()
    }

    /// The aval of an atom.
    pub fn atom_aval<'a>(&'a self, a: &'a Atom) -> &'a Aval {
        match a {
            Atom::Var(v) => self.aval(*v),
            Atom::Literal(l) => &l.aval,
        }
    }
}

/// JAX's variable names: a, b, ..., z, ba, bb, ...
fn var_name(mut n: usize) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}

impl fmt::Display for Jaxpr {
    /// JAX's jaxpr syntax, one equation a line:
    /// `{ lambda ; a:f32[2,3]. let b:f32[2,3] = sin a in (b,) }`. Nested
    /// jaxprs (calls, cond branches, loop bodies) continue the variable
    /// names and put the equation's parameters on lines of their own, as
    /// JAX prints them; an output nothing reads prints as `_`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut next = 0;
        f.write_str(&write_jaxpr(self, &mut next, 0))
    }
}

/// `jaxpr` as text whose equations are indented `column + 4` (its `in`
/// line `column + 2`), naming variables from `next` on.
fn write_jaxpr(jaxpr: &Jaxpr, next: &mut usize, column: usize) -> String {
    let mut names = VarMap::with_capacity(jaxpr.avals.len(), String::new());
    let name = |v: Var, names: &mut VarMap<String>, next: &mut usize| {
        names[v] = var_name(*next);
        *next += 1;
    };
    for &v in jaxpr.constvars.iter().chain(&jaxpr.invars) {
        name(v, &mut names, next);
    }
    let binder = |v: &Var, names: &VarMap<String>| format!("{}:{}", names[v], jaxpr.aval(*v));
    let atom = |a: &Atom, names: &VarMap<String>| match a {
        Atom::Var(v) => names[v].clone(),
        Atom::Literal(l) => format!("{}:{}", l.value, l.aval),
    };
    let consts: Vec<String> = jaxpr.constvars.iter().map(|v| binder(v, &names)).collect();
    let ins: Vec<String> = jaxpr.invars.iter().map(|v| binder(v, &names)).collect();
    let mut out = format!("{{ lambda {}; {}. let", consts.join(" "), ins.join(" "));
    let eqn_pad = " ".repeat(column + 4);
    // JAX prints an equation output nothing reads as `_`, without using a name.
    let mut read = VarMap::with_capacity(jaxpr.avals.len(), false);
    let reads = jaxpr
        .eqns
        .iter()
        .flat_map(|e| &e.inputs)
        .chain(&jaxpr.outvars);
    for a in reads {
        if let Atom::Var(v) = a {
            read[v] = true;
        }
    }
    for e in &jaxpr.eqns {
        for &v in &e.outputs {
            if read[v] {
                name(v, &mut names, next);
            } else {
                names[v] = "_".into();
            }
        }
        let outs: Vec<String> = e.outputs.iter().map(|v| binder(v, &names)).collect();
        let args: Vec<String> = e.inputs.iter().map(|a| atom(a, &names)).collect();
        let param_column = column + 6;
        let params = e
            .primitive
            .params(param_column, &mut |j, col| write_jaxpr(j, next, col));
        let head = format!("\n{eqn_pad}{} = {}", outs.join(" "), e.primitive.name());
        out.push_str(&head);
        if params.is_empty() {
        } else if e.primitive.has_nested_jaxprs() {
            let pad = " ".repeat(param_column);
            out.push('[');
            for p in &params {
                out.push_str(&format!("\n{pad}{p}"));
            }
            out.push_str(&format!("\n{eqn_pad}]"));
        } else {
            out.push_str(&format!("[{}]", params.join(" ")));
        }
        out.push_str(&format!(" {}", args.join(" ")));
    }
    let outs: Vec<String> = jaxpr.outvars.iter().map(|a| atom(a, &names)).collect();
    let trailing = if outs.len() == 1 { "," } else { "" };
    out.push_str(&format!(
        "\n{}in ({}{trailing}) }}",
        " ".repeat(column + 2),
        outs.join(", ")
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_run_like_jaxs() {
        assert_eq!(var_name(0), "a");
        assert_eq!(var_name(25), "z");
        assert_eq!(var_name(26), "ba");
        assert_eq!(var_name(27), "bb");
    }
}
