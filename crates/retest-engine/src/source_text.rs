//! A decision's conditions as written in the source file, for reports.
//!
//! A condition's node text is its *preprocessed* text: `c == 'c'` where the
//! source says `c == LITCHAR`. Its span gives the line of its first and last
//! token, and the column of its first token in the preprocessed text, which is
//! the source's column only up to the first macro expanded on that line. So the
//! source text is found by matching, not by cutting at the span:
//! [`condition_texts`] looks, on each condition's line, for source tokens that
//! expand to the condition's text, where a source identifier matches itself or
//! stands for a macro (an object-like `NAME` or a call `NAME(…)`) that expands
//! to one or more tokens. The conditions must follow each other in evaluation
//! order separated only by `&&`, `||`, `!`, `?`, `:` and parentheses, the first
//! must not continue an operand before it, and the last must end the
//! expression. Of the matches, the one with the fewest macro names wins, then
//! the one whose first condition starts nearest the span's column.
//!
//! When no match exists (a macro that expands to a whole `&&` chain, a
//! condition without a span, an expansion whose call spans many lines), the
//! caller shows the preprocessed texts: nothing is guessed.

use std::collections::HashMap;

use retest_cover::mcdc::ConditionSpan;

/// One source token: its text and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// Byte range in the source.
    pub start: usize,
    /// Byte range end (exclusive).
    pub end: usize,
    /// 1-based line.
    pub line: u32,
    /// 1-based byte column.
    pub col: u32,
}

const PUNCT3: [&str; 4] = ["<<=", ">>=", "...", "->*"];
const PUNCT2: [&str; 24] = [
    "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=",
    "##", "::", ".*", "<:", ":>",
];

/// Splits C (or C++) source into tokens, skipping layout, comments and line
/// continuations. Never fails: an unterminated literal or comment ends at the
/// end of the text.
pub fn tokenize(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line, mut line_start) = (0usize, 1u32, 0usize);
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            i += 1;
            line += 1;
            line_start = i;
            continue;
        }
        if c.is_ascii_whitespace() || (c == b'\\' && b.get(i + 1) == Some(&b'\n')) {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                if b[i] == b'\n' {
                    line += 1;
                    line_start = i + 1;
                }
                i += 1;
            }
            i = (i + 2).min(b.len());
            continue;
        }
        let start = i;
        let col = (start - line_start) as u32 + 1;
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            // an encoding prefix: L'x', u8"x"
            if matches!(&src[start..i], "L" | "u" | "U" | "u8") && matches!(b.get(i), Some(b'\'' | b'"')) {
                i = literal_end(b, i);
            }
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            i += 1;
            while i < b.len() {
                let exponent_sign = matches!(b[i], b'+' | b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                if exponent_sign || b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.' || b[i] == b'\'' {
                    i += 1;
                } else {
                    break;
                }
            }
        } else if c == b'\'' || c == b'"' {
            i = literal_end(b, i);
        } else {
            let rest = &src[i..];
            let n = if PUNCT3.iter().any(|p| rest.starts_with(p)) {
                3
            } else if PUNCT2.iter().any(|p| rest.starts_with(p)) {
                2
            } else {
                rest.chars().next().map(char::len_utf8).unwrap_or(1)
            };
            i += n;
        }
        out.push(Token { start, end: i, line, col });
    }
    out
}

/// The end of the character or string literal whose quote is at `i`.
fn literal_end(b: &[u8], mut i: usize) -> usize {
    let q = b[i];
    i += 1;
    while i < b.len() && b[i] != q && b[i] != b'\n' {
        if b[i] == b'\\' {
            i += 1;
        }
        i += 1;
    }
    (i + 1).min(b.len())
}

const KEYWORDS: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float",
    "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof",
    "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "_Bool", "bool", "true",
    "false", "nullptr", "this", "new", "delete", "class", "template", "typename", "operator",
];

fn is_name(t: &str) -> bool {
    t.as_bytes().first().is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_') && !KEYWORDS.contains(&t)
}

fn is_operand_end(t: &str) -> bool {
    is_name(t)
        || t.as_bytes().first().is_some_and(|c| c.is_ascii_digit() || *c == b'\'' || *c == b'"')
        || matches!(t, ")" | "]" | "." | "->" | "++" | "--")
}

/// The longest stretch of source tokens one condition may take, per token of its text.
const MAX_SOURCE_PER_TOKEN: usize = 4;
/// Conditions with longer preprocessed texts are not looked for.
const MAX_EXPANDED: usize = 400;

/// (cost of the conditions from here on, end of this condition, start of the next).
type Step = (usize, usize, usize);

struct Matcher<'a> {
    src: &'a str,
    toks: &'a [Token],
    /// index of the matching `)` per `(`
    close: HashMap<usize, usize>,
    conds: Vec<Vec<&'a str>>,
    spans: Vec<ConditionSpan>,
    memo: HashMap<(usize, usize), Option<Step>>,
}

impl<'a> Matcher<'a> {
    fn text(&self, i: usize) -> &'a str {
        let t = &self.toks[i];
        &self.src[t.start..t.end]
    }

    /// Ends `j` (exclusive) with their least cost, for condition `k` starting at token `i`.
    fn ends(&self, k: usize, i: usize) -> Vec<(usize, usize)> {
        let e = &self.conds[k];
        let m = e.len();
        let limit = self.toks.len().min(i + MAX_SOURCE_PER_TOKEN * m + 16);
        let last_line = self.spans[k].end_line.max(self.spans[k].line) + 10;
        let w = m + 1;
        let mut reach = vec![usize::MAX; (limit - i + 1) * w];
        reach[0] = 0;
        let mut ends = Vec::new();
        for a in i..=limit {
            for bi in 0..=m {
                let cost = reach[(a - i) * w + bi];
                if cost == usize::MAX {
                    continue;
                }
                if bi == m {
                    if a > i {
                        ends.push((a, cost));
                    }
                    continue;
                }
                if a == limit || self.toks[a].line > last_line {
                    continue;
                }
                let t = self.text(a);
                let mut set = |to: usize, b: usize, c: usize| {
                    if to <= limit {
                        let x = &mut reach[(to - i) * w + b];
                        *x = (*x).min(c);
                    }
                };
                if t == e[bi] {
                    set(a + 1, bi + 1, cost);
                }
                if is_name(t) {
                    let mut afters = vec![a + 1];
                    if a + 1 < self.toks.len()
                        && self.text(a + 1) == "("
                        && let Some(&c) = self.close.get(&(a + 1))
                    {
                        afters.push(c + 1);
                    }
                    for after in afters {
                        for b in bi + 1..=m {
                            set(after, b, cost + 1);
                        }
                    }
                }
            }
        }
        ends
    }

    /// Least cost of conditions `k..` with condition `k` starting at token `i`:
    /// (cost, end of condition `k`, start of condition `k + 1`).
    fn best(&mut self, k: usize, i: usize) -> Option<Step> {
        if let Some(r) = self.memo.get(&(k, i)) {
            return *r;
        }
        let mut best: Option<Step> = None;
        for (j, c) in self.ends(k, i) {
            if k + 1 == self.conds.len() {
                let ends_expr = j == self.toks.len() || matches!(self.text(j), ")" | ";" | "," | "?" | ":" | "]" | "}");
                if ends_expr && best.is_none_or(|b| c < b.0) {
                    best = Some((c, j, j));
                }
                continue;
            }
            let mut op = false;
            let mut t = j;
            while t < self.toks.len() && matches!(self.text(t), "&&" | "||" | "!" | "(" | ")" | "?" | ":") {
                op |= matches!(self.text(t), "&&" | "||" | "?" | ":");
                t += 1;
                if op
                    && t < self.toks.len()
                    && self.toks[t].line == self.spans[k + 1].line
                    && let Some((rest, _, _)) = self.best(k + 1, t)
                    && best.is_none_or(|b| c + rest < b.0)
                {
                    best = Some((c + rest, j, t));
                }
            }
        }
        self.memo.insert((k, i), best);
        best
    }
}

/// The source text of each condition of a decision, found as the module
/// documentation says; `None` when it cannot be found. `conditions` are the
/// preprocessed texts, `spans` where each starts (all must be known).
pub fn condition_texts(
    src: &str,
    toks: &[Token],
    conditions: &[String],
    spans: &[Option<ConditionSpan>],
) -> Option<Vec<String>> {
    let ranges = locate(src, toks, conditions, spans)?;
    Some(ranges.into_iter().map(|(i, j)| layout(&src[toks[i].start..toks[j - 1].end])).collect())
}

/// The token range `[i, j)` of each condition, as [`condition_texts`] finds it.
fn locate(
    src: &str,
    toks: &[Token],
    conditions: &[String],
    spans: &[Option<ConditionSpan>],
) -> Option<Vec<(usize, usize)>> {
    if conditions.is_empty() || spans.len() != conditions.len() {
        return None;
    }
    let spans: Vec<ConditionSpan> = spans.iter().copied().collect::<Option<_>>()?;
    let mut conds = Vec::with_capacity(conditions.len());
    let mut owned = Vec::with_capacity(conditions.len());
    for c in conditions {
        let t = tokenize(c);
        if t.is_empty() || t.len() > MAX_EXPANDED {
            return None;
        }
        owned.push((c.as_str(), t));
    }
    for (c, t) in &owned {
        conds.push(t.iter().map(|x| &c[x.start..x.end]).collect::<Vec<&str>>());
    }
    let mut close = HashMap::new();
    let mut open = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        match &src[t.start..t.end] {
            "(" => open.push(i),
            ")" => {
                if let Some(o) = open.pop() {
                    close.insert(o, i);
                }
            }
            _ => {}
        }
    }
    let first = spans[0];
    let mut m = Matcher { src, toks, close, conds, spans, memo: HashMap::new() };
    let mut choice: Option<(usize, u32, usize)> = None;
    let starts = toks.partition_point(|t| t.line < first.line);
    for (i, tok) in toks.iter().enumerate().skip(starts) {
        if tok.line != first.line {
            break;
        }
        if i > 0 && is_operand_end(m.text(i - 1)) {
            continue;
        }
        if let Some((c, _, _)) = m.best(0, i) {
            let key = (c, tok.col.abs_diff(first.col), i);
            if choice.is_none_or(|b| key < b) {
                choice = Some(key);
            }
        }
    }
    let (_, _, mut i) = choice?;
    let mut out = Vec::with_capacity(m.conds.len());
    for k in 0..m.conds.len() {
        let (_, j, next) = m.best(k, i)?;
        out.push((i, j));
        i = next;
    }
    Some(out)
}

/// Text with each run of layout (line breaks and indentation included) as one space.
fn layout(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether two texts are the same tokens.
pub fn same_tokens(a: &str, b: &str) -> bool {
    let (ta, tb) = (tokenize(a), tokenize(b));
    ta.len() == tb.len() && ta.iter().zip(&tb).all(|(x, y)| a[x.start..x.end] == b[y.start..y.end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(line: u32, col: u32) -> Option<ConditionSpan> {
        Some(ConditionSpan { line, col, end_line: line })
    }

    fn find(src: &str, conds: &[&str], spans: &[Option<ConditionSpan>]) -> Option<Vec<String>> {
        let c: Vec<String> = conds.iter().map(|s| s.to_string()).collect();
        condition_texts(src, &tokenize(src), &c, spans)
    }

    #[test]
    fn tokens_skip_comments_and_keep_literals() {
        let src = "a /* x\n y */ == 'c' // z\n&& s[1] != \"a b\"";
        let t: Vec<&str> = tokenize(src).iter().map(|t| &src[t.start..t.end]).collect();
        assert_eq!(t, ["a", "==", "'c'", "&&", "s", "[", "1", "]", "!=", "\"a b\""]);
        assert_eq!(tokenize(src)[3].line, 3);
    }

    #[test]
    fn object_like_macro_is_shown_as_written() {
        let src = "#define LITCHAR 'c'\nint f(char c, int b) {\n  if (c == LITCHAR && b) return 1;\n}\n";
        assert_eq!(find(src, &["c == 'c'", "b"], &[span(3, 7), span(3, 20)]).unwrap(), ["c == LITCHAR", "b"]);
    }

    #[test]
    fn function_like_macro_is_shown_as_written() {
        let src = "int f(const char *p) {\n  while (*p && isspace(*p)) p++;\n}\n";
        let expanded = "( ( * __ctype_b_loc ( ) ) [ ( int ) ( ( * p ) ) ] & ( unsigned short int ) _ISspace )";
        assert_eq!(find(src, &["* p", expanded], &[span(2, 10), span(2, 16)]).unwrap(), ["*p", "isspace(*p)"]);
    }

    #[test]
    fn negations_and_parentheses_between_conditions() {
        let src = "x = !(a || b) && (c\n   || !d);";
        assert_eq!(
            find(src, &["a", "b", "c", "d"], &[span(1, 7), span(1, 12), span(1, 19), span(2, 8)]).unwrap(),
            ["a", "b", "c", "d"]
        );
    }

    #[test]
    fn the_column_picks_between_equal_decisions_on_one_line() {
        let src = "if (a) x(); if (a) y();";
        let (t, c) = (tokenize(src), vec!["a".to_string()]);
        // the first `a` is token 2 (column 5), the second token 10 (column 17)
        assert_eq!(locate(src, &t, &c, &[span(1, 17)]).unwrap(), [(10, 11)]);
        assert_eq!(locate(src, &t, &c, &[span(1, 5)]).unwrap(), [(2, 3)]);
    }

    #[test]
    fn a_literal_match_beats_a_macro_name() {
        // `X` could stand for `x`, but the literal `x` is the better match
        let src = "if (X == 1 || x) return;";
        assert_eq!(find(src, &["1 == 1", "x"], &[span(1, 5), span(1, 15)]).unwrap(), ["X == 1", "x"]);
    }

    #[test]
    fn nothing_is_guessed() {
        // a macro expanding to a whole chain: its conditions are not in the source
        let src = "#define BOTH (a && b)\nif (BOTH) return;";
        assert_eq!(find(src, &["a", "b"], &[span(2, 5), span(2, 5)]), None);
        // a condition without a span
        assert_eq!(find("if (a && b) ;", &["a", "b"], &[span(1, 5), None]), None);
        // the wrong line
        assert_eq!(find("if (a && b) ;\n", &["a", "b"], &[span(2, 5), span(2, 10)]), None);
        // a text the line does not have (a literal is no macro)
        assert_eq!(find("if (a && 2) ;", &["a", "c == 1"], &[span(1, 5), span(1, 10)]), None);
    }

    #[test]
    fn same_tokens_ignores_layout_only() {
        assert!(same_tokens("c == 'c'", "c=='c'"));
        assert!(!same_tokens("c == LITCHAR", "c == 'c'"));
    }
}
