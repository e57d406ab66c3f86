//! Framing of client input: lines ending in LF (CRLF accepted), where an over-long
//! line or one that is not UTF-8 is an item of its own, not a stream error, so that
//! the connection survives it.

use bytes::{Buf, BytesMut};
use tokio_util::codec::Decoder;

/// One framed line of client input.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line of text, without its line ending.
    Text(String),
    /// A line longer than the limit; its bytes were dropped.
    TooLong,
    /// A line that is not valid UTF-8.
    NotUtf8,
}

/// Splits input into [`Line`]s of at most `max` bytes.
#[derive(Debug)]
/// Its counts are `u32`: every session holds one, and lines are short.
pub struct LineCodec {
    max: u32,
    /// Bytes of the current line already searched for LF (at most `max` + 1).
    scanned: u32,
    /// Inside an over-long line: drop input up to the next LF.
    discarding: bool,
}

/// The longest line limit a codec takes; a larger `max` is this.
const MAX_LIMIT: u32 = 1 << 30;

impl LineCodec {
    /// A codec for lines of at most `max` bytes (line ending excluded).
    pub fn new(max: usize) -> LineCodec {
        LineCodec {
            max: u32::try_from(max).map_or(MAX_LIMIT, |m| m.min(MAX_LIMIT)),
            scanned: 0,
            discarding: false,
        }
    }

    /// The longest line this codec takes (what `ERR 413` names).
    pub fn max(&self) -> usize {
        self.max as usize
    }

    fn scanned(&self) -> usize {
        self.scanned as usize
    }

    /// `bytes` as a line if they are exactly one whole line (one LF, at the
    /// end) and nothing before them waits to be completed; otherwise `None`,
    /// and they go through a buffer and [`Decoder::decode`]. The same line
    /// as `decode` would give: a reader with nothing buffered skips the
    /// buffer this way.
    pub fn decode_whole(&mut self, bytes: &[u8]) -> Option<Line> {
        let [text @ .., b'\n'] = bytes else {
            return None;
        };
        if self.scanned != 0 || text.contains(&b'\n') {
            return None;
        }
        Some(self.line(text))
    }

    fn take_line(&mut self, buf: &mut BytesMut, end: usize) -> Line {
        let line = self.line(buf.get(..end).unwrap_or_default());
        // Advancing keeps the buffer a plain one that its owner may drop once
        // empty; splitting it off would make it shared.
        buf.advance(end + 1);
        line
    }

    fn line(&mut self, line: &[u8]) -> Line {
        self.scanned = 0;
        if std::mem::take(&mut self.discarding) {
            return Line::TooLong;
        }
        let mut text = line;
        if let [head @ .., b'\r'] = text {
            text = head;
        }
        if text.len() > self.max() {
            return Line::TooLong;
        }
        match std::str::from_utf8(text) {
            Ok(text) => Line::Text(text.to_string()),
            Err(_) => Line::NotUtf8,
        }
    }
}

impl Decoder for LineCodec {
    type Item = Line;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Line>, std::io::Error> {
        let unscanned = buf.get(self.scanned()..).unwrap_or_default();
        if let Some(offset) = unscanned.iter().position(|&b| b == b'\n') {
            let end = self.scanned() + offset;
            return Ok(Some(self.take_line(buf, end)));
        }
        // No line end yet. Past the limit (plus room for CR) the line is too long:
        // drop what has come so far and remember to drop the rest of it.
        if buf.len() > self.max() + 1 {
            buf.advance(buf.len());
            self.scanned = 0;
            self.discarding = true;
        } else {
            // At most `max` + 1, which `MAX_LIMIT` keeps within u32.
            self.scanned = u32::try_from(buf.len()).unwrap_or(MAX_LIMIT);
        }
        Ok(None)
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Line>, std::io::Error> {
        if let Some(line) = self.decode(buf)? {
            return Ok(Some(line));
        }
        // A last line without LF still counts; one too long to keep is one
        // `TooLong`, as it would be with its LF.
        if std::mem::take(&mut self.discarding) {
            buf.clear();
            self.scanned = 0;
            return Ok(Some(Line::TooLong));
        }
        if buf.is_empty() {
            return Ok(None);
        }
        buf.extend_from_slice(b"\n");
        let end = buf.len() - 1;
        Ok(Some(self.take_line(buf, end)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(codec: &mut LineCodec, chunks: &[&[u8]]) -> Vec<Line> {
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk);
            while let Some(line) = codec.decode(&mut buf).unwrap() {
                out.push(line);
            }
        }
        while let Some(line) = codec.decode_eof(&mut buf).unwrap() {
            out.push(line);
        }
        out
    }

    /// What `decode_whole` gives is what `decode` gives through a buffer,
    /// and it takes nothing but one whole line with nothing pending.
    #[test]
    fn a_whole_line_decodes_as_through_a_buffer() {
        let long = [vec![b'x'; 80], b"\n".to_vec()].concat();
        let whole: [&[u8]; 5] = [b"MOVE d3\n", b"PING\r\n", b"\n", &long, b"\xff\xfe\n"];
        for bytes in whole {
            let mut buffered = BytesMut::from(bytes);
            let expected = LineCodec::new(64).decode(&mut buffered).unwrap();
            assert_eq!(LineCodec::new(64).decode_whole(bytes), expected);
        }
        for bytes in [&b"MOVE d3"[..], b"PING\nQUIT\n", b""] {
            assert_eq!(LineCodec::new(64).decode_whole(bytes), None);
        }
        // The end of a line begun in an earlier read goes through the buffer.
        let mut codec = LineCodec::new(64);
        let mut buf = BytesMut::from(&b"MOVE"[..]);
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        assert_eq!(codec.decode_whole(b" d3\n"), None);
        // The rest of an over-long line is that line's one `TooLong`.
        let mut codec = LineCodec::new(4);
        let mut buf = BytesMut::from(&b"MOVE d3 and more"[..]);
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        assert!(buf.is_empty());
        assert_eq!(codec.decode_whole(b"tail\n"), Some(Line::TooLong));
        assert_eq!(
            codec.decode_whole(b"PING\n"),
            Some(Line::Text("PING".into()))
        );
    }

    #[test]
    fn lines_split_on_lf_and_crlf_across_chunks() {
        let lines = decode_all(
            &mut LineCodec::new(64),
            &[b"MOVE d", b"3\r\nPI", b"NG\nQUIT"],
        );
        let text = |s: &str| Line::Text(s.to_string());
        assert_eq!(lines, vec![text("MOVE d3"), text("PING"), text("QUIT")]);
    }

    #[test]
    fn a_long_line_is_one_item_and_the_next_line_survives() {
        let long = vec![b'x'; 300];
        let lines = decode_all(&mut LineCodec::new(64), &[&long, &long, b"\nPING\n"]);
        assert_eq!(lines, vec![Line::TooLong, Line::Text("PING".to_string())]);
        let lines = decode_all(&mut LineCodec::new(4), &[b"ABCDE\nOK\n"]);
        assert_eq!(lines, vec![Line::TooLong, Line::Text("OK".to_string())]);
    }

    #[test]
    fn invalid_utf8_is_an_item() {
        let lines = decode_all(&mut LineCodec::new(64), &[b"\xff\xfe\nPING\n"]);
        assert_eq!(lines, vec![Line::NotUtf8, Line::Text("PING".to_string())]);
    }

    proptest::proptest! {
        /// However the bytes arrive, the lines are the same: cutting the input
        /// anywhere (inside a CR LF, a UTF-8 sequence, an over-long line) must
        /// not change what the codec yields.
        #[test]
        fn chunking_never_changes_the_lines(
            input in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::num::u8::ANY,
                    proptest::strategy::Just(b'\n'),
                    proptest::strategy::Just(b'\r'),
                ],
                0..200,
            ),
            cuts in proptest::collection::vec(0usize..200, 0..8),
            max in 1usize..24,
        ) {
            let whole = decode_all(&mut LineCodec::new(max), &[&input]);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(input.len())).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut from = 0;
            for cut in cuts.into_iter().chain([input.len()]) {
                chunks.push(&input[from..cut]);
                from = cut;
            }
            let pieces = decode_all(&mut LineCodec::new(max), &chunks);
            proptest::prop_assert_eq!(&whole, &pieces);
            // Every line feed ends one item; a last unterminated line is one more.
            let feeds = input.iter().filter(|&&b| b == b'\n').count();
            let tail = usize::from(input.last().is_some_and(|&b| b != b'\n'));
            proptest::prop_assert_eq!(whole.len(), feeds + tail);
        }
    }
}
