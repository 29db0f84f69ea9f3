//! Python-literal and JavaScript-object renderings (`repr` of a dict,
//! `console.log` of an object): their string values, each with its key.
//!
//! Hand-written because no well-kept crate reads them: an agent that
//! prints a tool result with `str(result)` shows `{'subject': 'Lunch',
//! 'body': "It's at noon\n…", 'start': datetime.datetime(2024, 5, 1, 9, 0)}`
//! — single quotes, Python escapes, `True`/`None`, calls — which is neither
//! JSON nor YAML. The grammar read: dicts/objects (quoted or bare keys),
//! lists, tuples, sets, strings (`'…'`, `"…"`, triple-quoted, backticks,
//! `r`/`b`/`u`/`f` prefixes), numbers, names and calls (`datetime.datetime(…)`,
//! `Decimal('1.5')`, keyword arguments). Anything else is not a rendering
//! and gives `None`. Called by `structure.rs` only.

use super::field::Field;

/// Nesting deeper than this is refused (no stack exhaustion on input).
const MAX_DEPTH: usize = 64;

struct Reader<'a> {
    s: &'a [u8],
    text: &'a str,
    at: usize,
    fields: Vec<Field>,
}

/// The string values of `text`, a whole Python / JS literal, each with the
/// nearest key above it (`None` when `text` is not one).
pub(crate) fn fields(text: &str) -> Option<Vec<Field>> {
    let mut r = Reader {
        s: text.as_bytes(),
        text,
        at: 0,
        fields: Vec::new(),
    };
    r.ws();
    if !matches!(r.peek(), Some(b'{' | b'[' | b'(')) {
        return None;
    }
    r.value("", 0)?;
    r.ws();
    (r.at == r.s.len()).then_some(r.fields)
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        let hit = self.peek() == Some(c);
        self.at += usize::from(hit);
        hit
    }

    /// One value under key `key`.
    fn value(&mut self, key: &str, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            b'{' => self.dict(key, depth),
            b'[' => self.seq(b']', key, depth),
            b'(' => self.seq(b')', key, depth),
            b'\'' | b'"' | b'`' => {
                let s = self.string()?;
                self.push(key, s);
                Some(())
            }
            c if c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.') => self.number(),
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let name = self.name();
                // A prefixed string (r'…', b"…", f'…').
                if name.len() <= 2
                    && name.bytes().all(|b| b"rRbBuUfF".contains(&b))
                    && matches!(self.peek(), Some(b'\'' | b'"'))
                {
                    let s = self.string()?;
                    self.push(key, s);
                    return Some(());
                }
                if self.peek() == Some(b'(') {
                    // A call's arguments carry no field of their own.
                    return self.seq(b')', "", depth);
                }
                Some(())
            }
            _ => None,
        }
    }

    fn push(&mut self, key: &str, value: String) {
        if !value.trim().is_empty() {
            self.fields.push(Field {
                name: key.to_owned(),
                value,
            });
        }
    }

    fn dict(&mut self, key: &str, depth: usize) -> Option<()> {
        self.at += 1;
        loop {
            if self.eat(b'}') {
                return Some(());
            }
            self.ws();
            let name = match self.peek()? {
                b'\'' | b'"' | b'`' => self.string()?,
                c if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' => self.name(),
                _ => return None,
            };
            if !self.eat(b':') {
                // A set literal: `{'a', 'b'}`.
                self.push(key, name);
            } else {
                self.value(&name, depth + 1)?;
            }
            if !self.eat(b',') {
                return self.eat(b'}').then_some(());
            }
        }
    }

    fn seq(&mut self, close: u8, key: &str, depth: usize) -> Option<()> {
        self.at += 1;
        loop {
            if self.eat(close) {
                return Some(());
            }
            // A keyword argument of a call: `tzinfo=None`.
            let mark = self.at;
            self.ws();
            if self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                self.name();
                if !self.eat(b'=') {
                    self.at = mark;
                }
            }
            self.value(key, depth + 1)?;
            if !self.eat(b',') {
                return self.eat(close).then_some(());
            }
        }
    }

    fn name(&mut self) -> String {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$'))
        {
            self.at += 1;
        }
        self.text[start..self.at].to_owned()
    }

    fn number(&mut self) -> Option<()> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+' | b'_'))
        {
            self.at += 1;
        }
        (self.at > start).then_some(())
    }

    /// A quoted string at the cursor, escapes decoded.
    fn string(&mut self) -> Option<String> {
        let q = self.peek()?;
        let triple = self.s.get(self.at..self.at + 3) == Some(&[q, q, q]);
        self.at += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let rest = self.text.get(self.at..)?;
            let c = rest.chars().next()?;
            if c as u32 == u32::from(q) {
                if !triple {
                    self.at += 1;
                    return Some(out);
                }
                if rest.as_bytes().starts_with(&[q, q, q]) {
                    self.at += 3;
                    return Some(out);
                }
            }
            if c == '\\' {
                self.at += 1;
                self.escape(&mut out)?;
                continue;
            }
            if c == '\n' && !triple && q != b'`' {
                return None;
            }
            out.push(c);
            self.at += c.len_utf8();
        }
    }

    fn escape(&mut self, out: &mut String) -> Option<()> {
        let c = self.text.get(self.at..)?.chars().next()?;
        self.at += c.len_utf8();
        let hex = |r: &mut Self, n: usize| -> Option<char> {
            let digits = r.text.get(r.at..r.at + n)?;
            r.at += n;
            char::from_u32(u32::from_str_radix(digits, 16).ok()?)
        };
        let decoded = match c {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            '0' => '\0',
            'x' => hex(self, 2)?,
            'u' => hex(self, 4)?,
            'U' => hex(self, 8)?,
            '\n' => return Some(()),
            other => other,
        };
        out.push(decoded);
        Some(())
    }
}
