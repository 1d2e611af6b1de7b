//! MLIR text in generic form (what MLIR prints with `printGenericOpForm`,
//! and what [`super::artifact_to_text`] prints) read into a tree of ops
//! whose attributes and types stay text. Locations (`loc(...)`) are
//! skipped.

use super::VhloError;

/// One op: its name, values by their text names, attributes as text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Op {
    pub(crate) name: String,
    /// Result names; a pack `%8:2` becomes `%8#0`, `%8#1`.
    pub(crate) results: Vec<String>,
    pub(crate) operands: Vec<String>,
    /// The inherent attributes printed in `<{...}>`.
    pub(crate) properties: Vec<(String, String)>,
    pub(crate) regions: Vec<Region>,
    /// The attributes printed in the trailing `{...}`.
    pub(crate) attributes: Vec<(String, String)>,
    pub(crate) operand_types: Vec<String>,
    pub(crate) result_types: Vec<String>,
}

/// A region: its blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Region {
    pub(crate) blocks: Vec<Block>,
}

/// A block: its arguments (name, type) and ops.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Block {
    pub(crate) arguments: Vec<(String, String)>,
    pub(crate) ops: Vec<Op>,
}

fn bad(what: impl Into<String>) -> VhloError {
    VhloError(what.into())
}

/// Reads the top-level ops of `text`.
pub(crate) fn parse(text: &str) -> Result<Vec<Op>, VhloError> {
    let mut c = Cursor { text, pos: 0 };
    let mut ops = Vec::new();
    loop {
        c.skip_space();
        if c.at_end() {
            return Ok(ops);
        }
        if c.peek() == Some('#') {
            // An alias definition (`#loc1 = loc(...)`): skip the line.
            c.skip_line();
            continue;
        }
        ops.push(c.op()?);
    }
}

struct Cursor<'t> {
    text: &'t str,
    pos: usize,
}

impl<'t> Cursor<'t> {
    fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    fn rest(&self) -> &'t str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn error(&self, what: &str) -> VhloError {
        let line = self.text[..self.pos].matches('\n').count() + 1;
        let near: String = self.rest().chars().take(40).collect();
        bad(format!("MLIR text, line {line}: {what} (at `{near}`)"))
    }

    fn skip_space(&mut self) {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with("//") {
                self.skip_line();
            } else {
                return;
            }
        }
    }

    fn skip_line(&mut self) {
        match self.rest().find('\n') {
            Some(n) => self.pos += n + 1,
            None => self.pos = self.text.len(),
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), VhloError> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.error(&format!("expected `{token}`")))
        }
    }

    /// A name made of identifier characters after a sigil (`%`, `^`).
    fn name(&mut self, sigil: char) -> Result<String, VhloError> {
        self.skip_space();
        let rest = self.rest();
        if !rest.starts_with(sigil) {
            return Err(self.error(&format!("expected a `{sigil}` name")));
        }
        let len = rest[1..]
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || "_$.-#".contains(ch)))
            .map(|n| n + 1)
            .unwrap_or(rest.len());
        self.pos += len;
        Ok(rest[..len].to_string())
    }

    /// A quoted string, returned without its quotes (escapes kept).
    fn string(&mut self) -> Result<String, VhloError> {
        self.skip_space();
        let start = self.pos;
        self.string_end()?;
        Ok(self.text[start + 1..self.pos - 1].to_string())
    }

    /// Moves past the string literal at the cursor.
    fn string_end(&mut self) -> Result<(), VhloError> {
        let bytes = self.text.as_bytes();
        if bytes.get(self.pos) != Some(&b'"') {
            return Err(self.error("expected a string"));
        }
        let mut i = self.pos + 1;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'"' => {
                    self.pos = i + 1;
                    return Ok(());
                }
                _ => i += 1,
            }
        }
        Err(self.error("unterminated string"))
    }

    /// Text up to one of `stops` outside brackets and strings (a `->`
    /// is not a closing bracket), trimmed.
    fn balanced(&mut self, stops: &[char]) -> Result<String, VhloError> {
        self.skip_space();
        let start = self.pos;
        let mut depth = 0usize;
        while let Some(ch) = self.peek() {
            if depth == 0 && stops.contains(&ch) {
                break;
            }
            match ch {
                '"' => {
                    self.string_end()?;
                    continue;
                }
                '-' if self.rest().starts_with("->") => {
                    self.pos += 2;
                    continue;
                }
                '(' | '[' | '{' | '<' => depth += 1,
                ')' | ']' | '}' | '>' => {
                    depth = depth
                        .checked_sub(1)
                        .ok_or_else(|| self.error("unbalanced brackets"))?;
                }
                _ => {}
            }
            self.pos += ch.len_utf8();
        }
        if depth != 0 {
            return Err(self.error("unbalanced brackets"));
        }
        let text = self.text[start..self.pos].trim();
        if text.is_empty() {
            return Err(self.error("expected an attribute or type"));
        }
        Ok(text.to_string())
    }

    /// `loc(...)`, if present.
    fn skip_location(&mut self) -> Result<(), VhloError> {
        if self.eat("loc(") {
            self.pos -= 1;
            self.balanced_group()?;
        }
        Ok(())
    }

    /// Moves past the bracketed group at the cursor.
    fn balanced_group(&mut self) -> Result<(), VhloError> {
        let open = self
            .peek()
            .ok_or_else(|| self.error("expected a bracket"))?;
        self.pos += 1;
        let close = match open {
            '(' => ')',
            '[' => ']',
            '{' => '}',
            '<' => '>',
            _ => return Err(self.error("expected a bracket")),
        };
        if self.peek() != Some(close) {
            self.balanced(&[close])?;
        }
        self.expect(&close.to_string())
    }

    /// `{name = value, unit_name}`: the entries, values as text
    /// (`unit` for a unit attribute).
    fn dictionary(&mut self) -> Result<Vec<(String, String)>, VhloError> {
        self.expect("{")?;
        let mut entries = Vec::new();
        if self.eat("}") {
            return Ok(entries);
        }
        loop {
            self.skip_space();
            let key = if self.peek() == Some('"') {
                let start = self.pos;
                self.string_end()?;
                self.text[start..self.pos].to_string()
            } else {
                let rest = self.rest();
                let len = rest
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || "_$.-".contains(ch)))
                    .unwrap_or(rest.len());
                if len == 0 {
                    return Err(self.error("expected an attribute name"));
                }
                self.pos += len;
                rest[..len].to_string()
            };
            let value = if self.eat("=") {
                self.balanced(&[',', '}'])?
            } else {
                "unit".to_string()
            };
            entries.push((key, value));
            if self.eat("}") {
                return Ok(entries);
            }
            self.expect(",")?;
        }
    }

    /// `(type, type)`: the types of a parenthesized list.
    fn type_list(&mut self) -> Result<Vec<String>, VhloError> {
        self.expect("(")?;
        let mut types = Vec::new();
        if self.eat(")") {
            return Ok(types);
        }
        loop {
            types.push(self.balanced(&[',', ')'])?);
            if self.eat(")") {
                return Ok(types);
            }
            self.expect(",")?;
        }
    }

    fn op(&mut self) -> Result<Op, VhloError> {
        self.skip_space();
        let mut results = Vec::new();
        if self.peek() == Some('%') {
            loop {
                let name = self.name('%')?;
                if self.eat(":") {
                    self.skip_space();
                    let digits: String = self
                        .rest()
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect();
                    self.pos += digits.len();
                    let count: usize = digits
                        .parse()
                        .map_err(|_| self.error("expected a result count"))?;
                    results.extend((0..count).map(|i| format!("{name}#{i}")));
                } else {
                    results.push(name);
                }
                if !self.eat(",") {
                    break;
                }
            }
            self.expect("=")?;
        }
        let name = self.string()?;
        self.expect("(")?;
        let mut operands = Vec::new();
        if !self.eat(")") {
            loop {
                operands.push(self.name('%')?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        if self.eat("[") {
            return Err(self.error(&format!("{name} has block successors")));
        }
        let properties = if self.eat("<") {
            let entries = self.dictionary()?;
            self.expect(">")?;
            entries
        } else {
            Vec::new()
        };
        let mut regions = Vec::new();
        if self.eat("(") {
            loop {
                regions.push(self.region()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.skip_space();
        let attributes = if self.peek() == Some('{') {
            self.dictionary()?
        } else {
            Vec::new()
        };
        self.expect(":")?;
        let operand_types = self.type_list()?;
        self.expect("->")?;
        self.skip_space();
        let result_types = if self.peek() == Some('(') {
            self.type_list()?
        } else {
            vec![self.balanced(&[' ', '\n', '\t', '\r'])?]
        };
        self.skip_location()?;
        if operand_types.len() != operands.len() || result_types.len() != results.len() {
            return Err(self.error(&format!(
                "{name}: {} operands and {} results against a signature of {} and {}",
                operands.len(),
                results.len(),
                operand_types.len(),
                result_types.len()
            )));
        }
        Ok(Op {
            name,
            results,
            operands,
            properties,
            regions,
            attributes,
            operand_types,
            result_types,
        })
    }

    fn region(&mut self) -> Result<Region, VhloError> {
        self.expect("{")?;
        let mut region = Region::default();
        loop {
            self.skip_space();
            match self.peek() {
                Some('}') => {
                    self.pos += 1;
                    return Ok(region);
                }
                Some('^') => {
                    self.name('^')?;
                    let mut block = Block::default();
                    if self.eat("(") {
                        loop {
                            let name = self.name('%')?;
                            self.expect(":")?;
                            let ty = self.balanced(&[',', ')', ' '])?;
                            self.skip_location()?;
                            block.arguments.push((name, ty));
                            if self.eat(")") {
                                break;
                            }
                            self.expect(",")?;
                        }
                    }
                    self.expect(":")?;
                    region.blocks.push(block);
                }
                Some(_) => {
                    let op = self.op()?;
                    if region.blocks.is_empty() {
                        region.blocks.push(Block::default());
                    }
                    region
                        .blocks
                        .last_mut()
                        .expect("a block was pushed")
                        .ops
                        .push(op);
                }
                None => return Err(self.error("unterminated region")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_ops_with_regions_properties_and_packs() {
        let text = r#"
"builtin.module"() <{sym_name = "m"}> ({
  "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2xf32> loc(unknown)):
    %0:2 = "stablehlo.while"(%arg0, %arg0) ({
    ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
      "stablehlo.return"(%a) : (tensor<2xf32>) -> ()
    }, {
      "stablehlo.return"(%arg0, %arg0) : (tensor<2xf32>, tensor<2xf32>) -> ()
    }) {dims = array<i64: 1, 2>, flag, "q.k" = "a,}b"} : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
    "func.return"(%0#1) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32} : () -> ()
"#;
        let ops = parse(text).unwrap();
        assert_eq!(ops.len(), 1);
        let module = &ops[0];
        assert_eq!(module.properties, vec![("sym_name".into(), "\"m\"".into())]);
        assert_eq!(
            module.attributes,
            vec![("mhlo.num_partitions".into(), "1 : i32".into())]
        );
        let func = &module.regions[0].blocks[0].ops[0];
        assert_eq!(
            func.properties[0],
            (
                "function_type".into(),
                "(tensor<2xf32>) -> tensor<2xf32>".into()
            )
        );
        let block = &func.regions[0].blocks[0];
        assert_eq!(
            block.arguments,
            vec![("%arg0".into(), "tensor<2xf32>".into())]
        );
        let w = &block.ops[0];
        assert_eq!(w.results, vec!["%0#0", "%0#1"]);
        assert_eq!(w.regions.len(), 2);
        assert_eq!(w.regions[0].blocks[0].arguments.len(), 2);
        assert_eq!(w.regions[1].blocks[0].ops[0].operands.len(), 2);
        assert_eq!(
            w.attributes,
            vec![
                ("dims".into(), "array<i64: 1, 2>".into()),
                ("flag".into(), "unit".into()),
                ("\"q.k\"".into(), "\"a,}b\"".into()),
            ]
        );
        assert_eq!(block.ops[1].operands, vec!["%0#1"]);
    }

    #[test]
    fn malformed_text_is_an_error_with_its_line() {
        let err = parse("\"a.b\"(%x : () -> ()").unwrap_err();
        assert!(err.0.contains("line 1"), "{err}");
        assert!(parse("\"a.b\"() : (tensor<2xf32>) -> ()").is_err());
    }
}
