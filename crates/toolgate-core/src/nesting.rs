//! How deep a document from outside may nest, checked before a parser sees it.
//!
//! serde_json refuses a document nested deeper than [`MAX_DEPTH`] at once. The YAML parser
//! (libyaml's scanner, under serde_norway) has no such limit before its own deserializer's
//! recursion check, and its cost grows with the square of the depth (100,000 nested `[`
//! take over 20 s), so [`check_yaml`] runs first: one linear pass over the text that counts
//! flow (`[`, `{`) and block (indentation, `- `) nesting, quoted strings, comments, block
//! scalars and plain text not counted, and refuses the document at the first level past the
//! limit.

use std::fmt;

/// The deepest nesting a document may have: what serde_json accepts (its recursion limit of
/// 128 refuses the 128th level), so a YAML document is refused where the same one in JSON is.
pub const MAX_DEPTH: usize = 127;

/// A document nested deeper than [`MAX_DEPTH`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooDeep {
    /// The limit passed.
    pub limit: usize,
    /// The 1-based line of the text where the nesting passed it.
    pub line: usize,
}

impl fmt::Display for TooDeep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the YAML nests deeper than {} levels (line {}), the most a JSON document may nest; flatten it",
            self.limit, self.line
        )
    }
}

impl std::error::Error for TooDeep {}

/// Refuse YAML `text` nested deeper than [`MAX_DEPTH`] collections, in time linear in its
/// length and before any parser runs. Collections are counted as the YAML scanner opens them:
/// flow `[`/`{` where a value may start, block mappings and sequences by their indentation
/// (a sequence under a key at the same column is a level, `- - x` is two); text inside
/// quotes, comments, block scalars (`|`, `>`) and plain scalars (their continuation lines
/// too) is not counted. What this cannot tell apart it counts at most one level too many
/// or too few, so documents far from the limit load as before and the parser's own
/// recursion limit stays behind it.
pub fn check_yaml(text: &str) -> Result<(), TooDeep> {
    check_yaml_with(text, MAX_DEPTH)
}

/// [`check_yaml`] with another limit.
pub fn check_yaml_with(text: &str, limit: usize) -> Result<(), TooDeep> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut scan = Scan { limit, ..Scan::default() };
    for (n, line) in text.split('\n').enumerate() {
        scan.line = n + 1;
        scan.next_line(line.strip_suffix('\r').unwrap_or(line).as_bytes())?;
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Seq,
    Map,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    Double,
    Single,
}

/// What the scan is inside when a line ends.
#[derive(Debug, Default)]
struct Scan {
    limit: usize,
    line: usize,
    /// Open block collections: the column of each and its kind, innermost last.
    stack: Vec<(usize, Kind)>,
    /// Open flow collections.
    flow: usize,
    /// The column where the outermost open flow collection began (a flow key's column).
    flow_col: usize,
    /// A quoted scalar still open at the end of the last line.
    quote: Option<Quote>,
    /// A block scalar: its content lines are indented deeper than `parent` (the innermost
    /// collection's column, -1 at the top); `indent` is the first content line's.
    block: Option<(isize, Option<usize>)>,
    /// A plain scalar open at the end of the last line: a line indented deeper than this
    /// column continues it.
    plain: Option<isize>,
    /// In a flow collection: whether a new value may start here (after `[`, `{`, `,`, `:`).
    token_start: bool,
}

fn blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Whether position `i` ends a token: the line's end or a blank.
fn ends(line: &[u8], i: usize) -> bool {
    line.get(i).is_none_or(|&b| blank(b))
}

impl Scan {
    fn too_deep(&self) -> Result<(), TooDeep> {
        if self.stack.len() + self.flow > self.limit {
            return Err(TooDeep { limit: self.limit, line: self.line });
        }
        Ok(())
    }

    fn top(&self) -> Option<(usize, Kind)> {
        self.stack.last().copied()
    }

    /// The innermost block collection's column, -1 outside any.
    fn parent(&self) -> isize {
        self.top().map_or(-1, |(col, _)| col as isize)
    }

    /// A `- ` at `col`.
    fn seq(&mut self, col: usize) -> Result<(), TooDeep> {
        if self.top() != Some((col, Kind::Seq)) {
            self.stack.push((col, Kind::Seq));
        }
        self.too_deep()
    }

    /// A key at `col`.
    fn map(&mut self, col: usize) -> Result<(), TooDeep> {
        if self.top() == Some((col, Kind::Seq)) {
            // A sequence under a key at the same column ends at the next key.
            self.stack.pop();
        }
        if self.top() != Some((col, Kind::Map)) {
            self.stack.push((col, Kind::Map));
        }
        self.too_deep()
    }

    fn next_line(&mut self, line: &[u8]) -> Result<(), TooDeep> {
        let indent = line.iter().take_while(|&&b| b == b' ').count();
        let empty = line.iter().all(|&b| blank(b));
        if let Some((parent, content)) = self.block {
            if empty {
                return Ok(());
            }
            match content {
                None if indent as isize > parent => {
                    self.block = Some((parent, Some(indent)));
                    return Ok(());
                }
                Some(content) if indent >= content => return Ok(()),
                _ => self.block = None,
            }
        }
        if let Some(quote) = self.quote {
            return self.quoted(line, 0, quote);
        }
        if self.flow > 0 {
            return self.in_flow(line, 0);
        }
        let first = line.get(indent).copied();
        if empty || first == Some(b'#') {
            if !empty {
                // A comment line ends a plain scalar.
                self.plain = None;
            }
            return Ok(());
        }
        if indent == 0 && (line.starts_with(b"---") || line.starts_with(b"...")) && ends(line, 3) {
            self.stack.clear();
            self.plain = None;
            return if line[0] == b'-' { self.node(line, 3) } else { Ok(()) };
        }
        // Taken either way: a line that does not continue the plain scalar ends it.
        if let Some(threshold) = self.plain.take()
            && indent as isize > threshold
        {
            return self.plain_text(line, indent, None);
        }
        if first == Some(b'%') && indent == 0 {
            return Ok(()); // a directive
        }
        while self.top().is_some_and(|(col, _)| col > indent) {
            self.stack.pop();
        }
        self.node(line, indent)
    }

    /// Where a block node may start: indicators, a flow collection, a scalar.
    fn node(&mut self, line: &[u8], mut i: usize) -> Result<(), TooDeep> {
        loop {
            while line.get(i).is_some_and(|&b| blank(b)) {
                i += 1;
            }
            let Some(&b) = line.get(i) else { return Ok(()) };
            match b {
                b'#' => return Ok(()),
                b'-' if ends(line, i + 1) => {
                    self.seq(i)?;
                    i += 1;
                }
                b'?' if ends(line, i + 1) => {
                    self.map(i)?;
                    i += 1;
                }
                b':' if ends(line, i + 1) => i += 1,
                b'[' | b'{' => {
                    self.flow_col = i;
                    self.flow = 1;
                    self.too_deep()?;
                    self.token_start = true;
                    return self.in_flow(line, i + 1);
                }
                b'"' => return self.quoted_key(line, i, Quote::Double),
                b'\'' => return self.quoted_key(line, i, Quote::Single),
                b'|' | b'>' => {
                    self.block = Some((self.parent(), None));
                    return Ok(());
                }
                b'&' | b'!' => {
                    while line.get(i).is_some_and(|&b| !blank(b)) {
                        i += 1;
                    }
                }
                _ => return self.plain_text(line, i, Some(i)),
            }
        }
    }

    /// A plain scalar from `i` (a key when `col` is its column and `: ` follows it).
    fn plain_text(&mut self, line: &[u8], mut i: usize, col: Option<usize>) -> Result<(), TooDeep> {
        while let Some(&b) = line.get(i) {
            if b == b':' && ends(line, i + 1) {
                if let Some(col) = col {
                    self.map(col)?;
                }
                return self.node(line, i + 1);
            }
            if b == b'#' && i > 0 && blank(line[i - 1]) {
                return Ok(());
            }
            i += 1;
        }
        self.plain = Some(self.parent());
        Ok(())
    }

    /// A quoted scalar at the start of a block node, perhaps a key.
    fn quoted_key(&mut self, line: &[u8], col: usize, quote: Quote) -> Result<(), TooDeep> {
        match close_quote(line, col + 1, quote) {
            None => {
                self.quote = Some(quote);
                Ok(())
            }
            Some(mut i) => {
                while line.get(i).is_some_and(|&b| blank(b)) {
                    i += 1;
                }
                if line.get(i) == Some(&b':') && ends(line, i + 1) {
                    self.map(col)?;
                    return self.node(line, i + 1);
                }
                Ok(())
            }
        }
    }

    /// The rest of a quoted scalar open since an earlier line.
    fn quoted(&mut self, line: &[u8], from: usize, quote: Quote) -> Result<(), TooDeep> {
        let Some(i) = close_quote(line, from, quote) else { return Ok(()) };
        self.quote = None;
        if self.flow > 0 {
            self.token_start = false;
            return self.in_flow(line, i);
        }
        // A multi-line quoted scalar is no key, and the rest of its line holds no node.
        Ok(())
    }

    /// Inside flow collections from `i`; back to block context when the last one closes.
    fn in_flow(&mut self, line: &[u8], mut i: usize) -> Result<(), TooDeep> {
        while let Some(&b) = line.get(i) {
            let after_blank = i == 0 || blank(line[i - 1]);
            match b {
                b'#' if after_blank => return Ok(()),
                b'[' | b'{' => {
                    self.flow += 1;
                    self.too_deep()?;
                    self.token_start = true;
                }
                b']' | b'}' => {
                    self.flow = self.flow.saturating_sub(1);
                    self.token_start = false;
                    if self.flow == 0 {
                        let col = self.flow_col;
                        return self.after_flow(line, i + 1, col);
                    }
                }
                b',' => self.token_start = true,
                b'"' | b'\'' if self.token_start => {
                    let quote = if b == b'"' { Quote::Double } else { Quote::Single };
                    match close_quote(line, i + 1, quote) {
                        None => {
                            self.quote = Some(quote);
                            return Ok(());
                        }
                        Some(end) => {
                            self.token_start = false;
                            i = end;
                            continue;
                        }
                    }
                }
                b':' | b'?' if line.get(i + 1).is_none_or(|&n| blank(n) || b"[]{},\"'".contains(&n)) => {
                    self.token_start = true;
                }
                _ if blank(b) => {}
                _ => self.token_start = false,
            }
            i += 1;
        }
        Ok(())
    }

    /// After a flow collection closed in block context: a flow key, a comment or nothing.
    fn after_flow(&mut self, line: &[u8], mut i: usize, col: usize) -> Result<(), TooDeep> {
        while line.get(i).is_some_and(|&b| blank(b)) {
            i += 1;
        }
        if line.get(i) == Some(&b':') && ends(line, i + 1) {
            self.map(col)?;
            return self.node(line, i + 1);
        }
        Ok(())
    }
}

/// The position after the quote that closes a scalar opened before `from`, if on this line.
fn close_quote(line: &[u8], mut i: usize, quote: Quote) -> Option<usize> {
    while let Some(&b) = line.get(i) {
        match (quote, b) {
            (Quote::Double, b'\\') => i += 1,
            (Quote::Double, b'"') => return Some(i + 1),
            (Quote::Single, b'\'') if line.get(i + 1) == Some(&b'\'') => i += 1,
            (Quote::Single, b'\'') => return Some(i + 1),
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_of(text: &str) -> usize {
        // The smallest limit it passes.
        (0..=MAX_DEPTH).find(|&limit| check_yaml_with(text, limit).is_ok()).expect("within MAX_DEPTH")
    }

    #[test]
    fn flow_nesting_is_counted_and_refused_past_the_limit() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(check_yaml(&nested(MAX_DEPTH)), Ok(()));
        assert_eq!(check_yaml(&nested(MAX_DEPTH + 1)), Err(TooDeep { limit: MAX_DEPTH, line: 1 }));
        assert_eq!(depth_of("{a: {b: [1, {c: [[2]]}]}}"), 6);
        assert_eq!(depth_of("key: [a, [b,\n  [c]], {d: e}]"), 4, "one for the mapping, three flow");
    }

    #[test]
    fn block_nesting_is_counted_by_indentation_and_dashes() {
        assert_eq!(depth_of("a:\n  b:\n    c: 1\n  d: 2\ne: 3\n"), 3);
        assert_eq!(depth_of("- - - x\n"), 3);
        assert_eq!(depth_of("key:\n- a\n- b: 1\n  c: 2\nother: 1\n"), 3, "map, seq at its column, map");
        assert_eq!(depth_of("- a: 1\n  b:\n    - c\n"), 3);
        assert_eq!(depth_of("plain scalar\n"), 0);
        let deep = "- ".repeat(MAX_DEPTH + 1) + "x\n";
        assert_eq!(check_yaml(&deep), Err(TooDeep { limit: MAX_DEPTH, line: 1 }));
        let stairs: String = (0..=MAX_DEPTH).map(|n| format!("{}k{n}:\n", " ".repeat(n))).collect();
        assert_eq!(check_yaml(&stairs), Err(TooDeep { limit: MAX_DEPTH, line: MAX_DEPTH + 1 }));
    }

    #[test]
    fn quotes_comments_block_scalars_and_plain_text_are_not_counted() {
        let many = "[".repeat(500);
        for text in [
            format!("a: \"{many}\"\n"),
            format!("a: '{many}'\n"),
            format!("a: 'it''s {many}'\n"),
            format!("a: \"x\\\" {many}\"\n"),
            format!("a: 1 # {many}\n"),
            format!("# {many}\n"),
            format!("a: |\n  {many}\n  {many}\nb: 1\n"),
            format!("- >-\n    {many}\n"),
            format!("a: see {many}\n"),
            format!("a: it's {many}\n"),
            format!("a: text\n  {many} continued\n"),
            format!("a: \"multi\n  {many}\n  line\"\n"),
            format!("a: [\"{many}\", '{many}', x # {many}\n  ]\n"),
        ] {
            assert!(depth_of(&text) <= 2, "{text}");
        }
        // After the block scalar, counting goes on.
        assert_eq!(depth_of("a: |\n  [[[\nb:\n  c: [[1]]\n"), 4);
    }
}
