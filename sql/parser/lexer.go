package parser

import (
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// lexer turns SQL text into tokens. The whole input is tokenised up front:
// the parser then needs arbitrary lookahead only as an index into a slice.
//
// Comments (-- and # to end of line, /* ... */) and whitespace are skipped.
// String-like tokens are decoded once here (escapes, doubled quotes); their
// values live in values and tokens refer to them by index.
type lexer struct {
	src    string
	toks   []token
	values []string

	// chainToks counts the tokens that can extend a chain built by a loop
	// rather than by recursion (infix operators, joins, set operations,
	// postfix operators, commas); see treeHeightBound.
	chainToks int

	// Positions are computed on demand from byte offsets (tokens carry only
	// offsets): lineStarts[i] is the offset where line i+1 starts; allASCII
	// lets columns be byte distances. Otherwise columns count runes from a
	// cursor on the line last asked about (requests mostly move forward, and
	// move back only to a statement's start).
	lineStarts []int32
	allASCII   bool // set by the scanners: no byte >= 0x80 seen so far
	curLine    int  // index into lineStarts of the last line asked about
	lineLo     int  // [lineLo, lineHi) are the offsets of line curLine
	lineHi     int
	colOff     int // rune-count cursor: offset and column on line curLine
	colN       int
}

// lex tokenises src into buffers taken from sc. The returned tokens end with
// a tEOF token.
func lex(src string, sc *scratch) (*lexer, *Error) {
	lx := &lexer{src: src}
	// Studio's SQL has about one token per 3.5 bytes; sizing for one per 3
	// avoids regrowing the slice (16 bytes per token, so at most about 6
	// bytes per input byte).
	lx.toks = reuse(sc.toks, len(src)/3+8)
	lx.values = reuse(sc.values, len(src)/32+4)
	lx.lineStarts = reuse(sc.lineStarts, 1+strings.Count(src, "\n"))
	defer func() {
		// Hand the (possibly regrown) buffers back for the next parse.
		sc.toks, sc.values, sc.lineStarts = lx.toks, lx.values, lx.lineStarts
	}()
	lx.indexLines()
	if err := lx.run(); err != nil {
		return nil, err
	}
	return lx, nil
}

// indexLines records where lines start and whether the text is ASCII.
func (lx *lexer) indexLines() {
	s := lx.src
	lx.lineStarts = append(lx.lineStarts[:0], 0)
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		lx.lineStarts = append(lx.lineStarts, int32(i))
	}
	lx.allASCII = true
	lx.setLine(0)
}

// noteText records whether text (a comment or literal the scanner skipped
// over without looking at every byte) has non-ASCII bytes.
func (lx *lexer) noteText(text string) {
	if !lx.allASCII {
		return
	}
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			lx.allASCII = false
			return
		}
	}
}

// setLine makes line (an index into lineStarts) the current one.
func (lx *lexer) setLine(line int) {
	lx.curLine = line
	lx.lineLo = int(lx.lineStarts[line])
	lx.lineHi = math.MaxInt
	if line+1 < len(lx.lineStarts) {
		lx.lineHi = int(lx.lineStarts[line+1])
	}
	lx.colOff = -1
}

// pos returns the position of byte offset off. It is called only after
// lexing (when allASCII is final) and is cheap for the common case: an
// ASCII text and an offset on the line asked about last.
func (lx *lexer) pos(off int) Pos {
	if lx.allASCII && lx.lineLo <= off && off < lx.lineHi {
		return Pos{Offset: off, Line: lx.curLine + 1, Col: off - lx.lineLo + 1}
	}
	return lx.posSlow(off, lx.allASCII)
}

// posSlow finds off's line, and its column by byte distance when ascii,
// else by counting runes.
func (lx *lexer) posSlow(off int, ascii bool) Pos {
	if off < lx.lineLo || off >= lx.lineHi {
		ls := lx.lineStarts
		lx.setLine(sort.Search(len(ls), func(i int) bool { return int(ls[i]) > off }) - 1)
	}
	if ascii {
		return Pos{Offset: off, Line: lx.curLine + 1, Col: off - lx.lineLo + 1}
	}
	// Move the rune cursor by the distance asked for (forwards, or
	// backwards when the parser revisits a statement's start), never by the
	// line's length: a long single-line input must stay linear.
	switch {
	case lx.colOff < 0:
		lx.colOff, lx.colN = lx.lineLo, 0
		fallthrough
	case off >= lx.colOff:
		lx.colN += utf8.RuneCountInString(lx.src[lx.colOff:off])
	default:
		lx.colN -= utf8.RuneCountInString(lx.src[off:lx.colOff])
	}
	lx.colOff = off
	return Pos{Offset: off, Line: lx.curLine + 1, Col: lx.colN + 1}
}

// errAt reports a lexical error. Lexing has not finished, so whether the
// text is ASCII is not known yet: columns are counted in runes.
func (lx *lexer) errAt(off int, msg string) *Error {
	return &Error{Msg: msg, Pos: lx.posSlow(off, false)}
}

func (lx *lexer) emit(kind tokKind, kw keyword, off, end, val int) {
	if kind >= tComma || kind == tLBrack || (kind == tWord && chainKeyword[kw]) {
		lx.chainToks++
	}
	lx.toks = append(lx.toks, token{kind: kind, kw: kw, off: int32(off), end: int32(end), val: int32(val)})
}

func (lx *lexer) addValue(v string) int {
	lx.values = append(lx.values, v)
	return len(lx.values) - 1
}

// Character classes of ASCII bytes, for the scanners' inner loops.
const (
	ccSpace  = 1 << iota // space, \t, \n, \r, \f, \v
	ccLetter             // a-z A-Z
	ccIdent              // letters, digits, _
)

var charClass = func() (t [256]uint8) {
	for _, c := range " \t\n\r\f\v" {
		t[c] |= ccSpace
	}
	for c := 0; c < 256; c++ {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			t[c] |= ccLetter | ccIdent
		case '0' <= c && c <= '9', c == '_':
			t[c] |= ccIdent
		}
	}
	return t
}()

func isIdentStart(c byte) bool { return c == '_' || charClass[c]&ccLetter != 0 }

func isIdentChar(c byte) bool { return charClass[c]&ccIdent != 0 }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHexDigit(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func (lx *lexer) run() *Error {
	s := lx.src
	n := len(s)
	i := 0
	for {
		// Whitespace and comments.
		for i < n {
			c := s[i]
			if charClass[c]&ccSpace != 0 {
				i++
				continue
			}
			if c == '#' || (c == '-' && i+1 < n && s[i+1] == '-') {
				end := strings.IndexByte(s[i:], '\n')
				if end < 0 {
					end = n - i
				}
				lx.noteText(s[i : i+end])
				i += end
				continue
			}
			if c == '/' && i+1 < n && s[i+1] == '*' {
				end := strings.Index(s[i+2:], "*/")
				if end < 0 {
					return lx.errAt(i, "Unterminated block comment")
				}
				lx.noteText(s[i : i+2+end])
				i += end + 4
				continue
			}
			break
		}
		if i >= n {
			lx.emit(tEOF, kwNone, n, n, -1)
			return nil
		}
		c := s[i]
		switch {
		case isIdentStart(c) || c >= utf8.RuneSelf:
			j, kw := lx.scanWord(i)
			if j == i {
				// A non-ASCII character that is not a letter.
				_, size := utf8.DecodeRuneInString(s[i:])
				lx.allASCII = false
				lx.emit(tIllegal, kwNone, i, i+size, -1)
				i += size
				continue
			}
			if j < n && (s[j] == '\'' || s[j] == '"') {
				if raw, bytes, ok := stringPrefix(s[i:j]); ok {
					k, err := lx.lexString(i, j, raw, bytes)
					if err != nil {
						return err
					}
					i = k
					continue
				}
			}
			lx.emit(tWord, kw, i, j, -1)
			i = j
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(s[i+1])):
			j, err := lx.lexNumber(i)
			if err != nil {
				return err
			}
			i = j
		case c == '\'' || c == '"':
			j, err := lx.lexString(i, i, false, false)
			if err != nil {
				return err
			}
			i = j
		case c == '`':
			j, err := lx.lexQuotedIdent(i)
			if err != nil {
				return err
			}
			i = j
		case c == '@':
			j := i + 1
			if j < n && isIdentStart(s[j]) {
				for j < n && isIdentChar(s[j]) {
					j++
				}
				lx.emit(tParam, kwNone, i, j, -1)
				i = j
				continue
			}
			// `@@system_variable` and a lone `@` are not parameters. They
			// become one illegal token: an error if a query contains it,
			// skipped inside a statement that is not a query.
			for j < n && (s[j] == '@' || isIdentChar(s[j])) {
				j++
			}
			lx.emit(tIllegal, kwNone, i, j, -1)
			i = j
		default:
			j, kind := lexOperator(s, i)
			if j == i {
				_, size := utf8.DecodeRuneInString(s[i:])
				j, kind = i+size, tIllegal
				lx.noteText(s[i:j])
			}
			lx.emit(kind, kwNone, i, j, -1)
			i = j
		}
	}
}

func quoteRune(r rune) string {
	if r == utf8.RuneError {
		return "(invalid UTF-8)"
	}
	return "'" + string(r) + "'"
}

// scanWord scans an unquoted identifier starting at i (ASCII letters,
// digits, underscores, Unicode letters and digits) and returns its end and
// its keyword id. It hashes the word as it goes (see kwHash), so keyword
// lookup needs no second pass; words with digits, underscores or non-ASCII
// letters are never keywords. It returns i when s[i] starts no word.
func (lx *lexer) scanWord(i int) (int, keyword) {
	s := lx.src
	j := i
	h := kwSeed
	letters := true
	for j < len(s) {
		c := s[j]
		cls := charClass[c]
		if cls&ccLetter != 0 {
			h = kwHashStep(h, c)
			j++
			continue
		}
		if cls&ccIdent != 0 {
			letters = false
			j++
			continue
		}
		if c < utf8.RuneSelf {
			break
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if r == utf8.RuneError || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			break
		}
		lx.allASCII = false
		letters = false
		j += size
	}
	if !letters || j-i < 2 || j-i > maxKeywordLen {
		return j, kwNone
	}
	return j, keywordAt(s[i:j], kwHashEnd(h, j-i))
}

// stringPrefix recognises the r, b, rb and br prefixes of raw and bytes
// string literals (any case).
func stringPrefix(w string) (raw, bytes, ok bool) {
	switch len(w) {
	case 1:
		switch w[0] {
		case 'r', 'R':
			return true, false, true
		case 'b', 'B':
			return false, true, true
		}
	case 2:
		a, b := w[0]|0x20, w[1]|0x20
		if (a == 'r' && b == 'b') || (a == 'b' && b == 'r') {
			return true, true, true
		}
	}
	return false, false, false
}

func (lx *lexer) lexNumber(i int) (int, *Error) {
	s := lx.src
	n := len(s)
	j := i
	kind := tInt
	if s[j] == '0' && j+2 < n && (s[j+1] == 'x' || s[j+1] == 'X') && isHexDigit(s[j+2]) {
		j += 2
		for j < n && isHexDigit(s[j]) {
			j++
		}
	} else {
		for j < n && isDigit(s[j]) {
			j++
		}
		if j < n && s[j] == '.' {
			kind = tFloat
			j++
			for j < n && isDigit(s[j]) {
				j++
			}
		}
		if j < n && (s[j] == 'e' || s[j] == 'E') {
			k := j + 1
			if k < n && (s[k] == '+' || s[k] == '-') {
				k++
			}
			if k < n && isDigit(s[k]) {
				kind = tFloat
				for k < n && isDigit(s[k]) {
					k++
				}
				j = k
			}
		}
	}
	if j < n && (isIdentChar(s[j]) || s[j] >= utf8.RuneSelf) {
		k := j
		for k < n && isIdentChar(s[k]) {
			k++
		}
		if k == j {
			_, size := utf8.DecodeRuneInString(s[j:])
			k = j + size
		}
		return 0, lx.errAt(i, "Invalid number literal: "+s[i:k])
	}
	lx.emit(kind, kwNone, i, j, -1)
	return j, nil
}

// lexString lexes a string or bytes literal whose opening quote is at q; the
// token starts at start (before any r/b prefix). Supported forms: '...',
// "...", ”'...”', """...""", with BigQuery escapes unless raw, and a doubled
// quote (” inside '...') standing for one quote, which is how Studio escapes
// values.
func (lx *lexer) lexString(start, q int, raw, bytes bool) (int, *Error) {
	s := lx.src
	n := len(s)
	quote := s[q]
	triple := q+2 < n && s[q+1] == quote && s[q+2] == quote
	i := q + 1
	if triple {
		i = q + 3
	}
	var buf []byte // nil while the value is a plain slice of src
	seg := i
	for {
		if i >= n {
			return 0, lx.errAt(start, "Unterminated string literal")
		}
		c := s[i]
		if c == quote {
			if triple {
				if i+2 < n && s[i+1] == quote && s[i+2] == quote {
					break
				}
				i++
				continue
			}
			if i+1 < n && s[i+1] == quote {
				buf = append(buf, s[seg:i]...)
				buf = append(buf, quote)
				i += 2
				seg = i
				continue
			}
			break
		}
		if c != '\\' {
			i++
			continue
		}
		if i+1 >= n {
			return 0, lx.errAt(start, "Unterminated string literal")
		}
		if raw {
			// A backslash keeps the next character from ending the literal
			// but both stay in the value.
			i += 2
			continue
		}
		buf = append(buf, s[seg:i]...)
		var err *Error
		buf, i, err = lx.unescape(buf, i)
		if err != nil {
			return 0, err
		}
		seg = i
	}
	var v string
	if buf == nil {
		v = s[seg:i]
	} else {
		v = string(append(buf, s[seg:i]...))
	}
	end := i + 1
	if triple {
		end = i + 3
	}
	kind := tString
	if bytes {
		kind = tBytes
	}
	lx.noteText(s[start:end])
	lx.emit(kind, kwNone, start, end, lx.addValue(v))
	return end, nil
}

// unescape decodes the escape sequence starting at the backslash s[i] and
// appends its value to buf. It returns the offset after the sequence.
func (lx *lexer) unescape(buf []byte, i int) ([]byte, int, *Error) {
	s := lx.src
	n := len(s)
	c := s[i+1]
	switch c {
	case '\\', '\'', '"', '`', '?':
		return append(buf, c), i + 2, nil
	case 'n':
		return append(buf, '\n'), i + 2, nil
	case 't':
		return append(buf, '\t'), i + 2, nil
	case 'r':
		return append(buf, '\r'), i + 2, nil
	case 'b':
		return append(buf, '\b'), i + 2, nil
	case 'f':
		return append(buf, '\f'), i + 2, nil
	case 'v':
		return append(buf, '\v'), i + 2, nil
	case 'a':
		return append(buf, '\a'), i + 2, nil
	case '0', '1', '2', '3':
		// Exactly three octal digits, value up to \377.
		if i+3 < n && isOctal(s[i+2]) && isOctal(s[i+3]) {
			v := (c-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0')
			return append(buf, v), i + 4, nil
		}
	case 'x', 'X':
		if i+3 < n && isHexDigit(s[i+2]) && isHexDigit(s[i+3]) {
			return append(buf, hexVal(s[i+2])<<4|hexVal(s[i+3])), i + 4, nil
		}
	case 'u', 'U':
		digits := 4
		if c == 'U' {
			digits = 8
		}
		if i+2+digits <= n {
			var r rune
			ok := true
			for k := 0; k < digits; k++ {
				d := s[i+2+k]
				if !isHexDigit(d) {
					ok = false
					break
				}
				r = r<<4 | rune(hexVal(d))
			}
			if ok && utf8.ValidRune(r) {
				return utf8.AppendRune(buf, r), i + 2 + digits, nil
			}
		}
	}
	end := min(n, i+2)
	if end < n && s[i+1] >= utf8.RuneSelf {
		_, size := utf8.DecodeRuneInString(s[i+1:])
		end = i + 1 + size
	}
	return nil, 0, lx.errAt(i, "Illegal escape sequence: "+s[i:end])
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

func hexVal(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// lexQuotedIdent lexes a `backticked` identifier. It may contain any
// character but a newline, and the same escapes as a string literal.
func (lx *lexer) lexQuotedIdent(start int) (int, *Error) {
	s := lx.src
	n := len(s)
	i := start + 1
	var buf []byte
	seg := i
	for {
		if i >= n || s[i] == '\n' {
			return 0, lx.errAt(start, "Unterminated quoted identifier")
		}
		c := s[i]
		if c == '`' {
			break
		}
		if c != '\\' {
			i++
			continue
		}
		if i+1 >= n {
			return 0, lx.errAt(start, "Unterminated quoted identifier")
		}
		buf = append(buf, s[seg:i]...)
		var err *Error
		buf, i, err = lx.unescape(buf, i)
		if err != nil {
			return 0, err
		}
		seg = i
	}
	var v string
	if buf == nil {
		v = s[seg:i]
	} else {
		v = string(append(buf, s[seg:i]...))
	}
	if v == "" {
		return 0, lx.errAt(start, "Expected: identifier, found: ``")
	}
	lx.noteText(s[start : i+1])
	lx.emit(tQuoted, kwNone, start, i+1, lx.addValue(v))
	return i + 1, nil
}

// lexOperator recognises punctuation and operators at s[i]. It returns i
// unchanged when s[i] starts no operator.
func lexOperator(s string, i int) (int, tokKind) {
	next := byte(0)
	if i+1 < len(s) {
		next = s[i+1]
	}
	switch s[i] {
	case '(':
		return i + 1, tLParen
	case ')':
		return i + 1, tRParen
	case '[':
		return i + 1, tLBrack
	case ']':
		return i + 1, tRBrack
	case ',':
		return i + 1, tComma
	case '.':
		return i + 1, tDot
	case ';':
		return i + 1, tSemi
	case '*':
		return i + 1, tStar
	case '+':
		return i + 1, tPlus
	case '-':
		return i + 1, tMinus
	case '/':
		return i + 1, tSlash
	case '^':
		return i + 1, tCaret
	case '&':
		return i + 1, tAmp
	case '~':
		return i + 1, tTilde
	case '=':
		return i + 1, tEq
	case '|':
		if next == '|' {
			return i + 2, tConcat
		}
		return i + 1, tPipe
	case '<':
		switch next {
		case '=':
			return i + 2, tLe
		case '>':
			return i + 2, tNe
		case '<':
			return i + 2, tShl
		}
		return i + 1, tLt
	case '>':
		switch next {
		case '=':
			return i + 2, tGe
		case '>':
			return i + 2, tShr
		}
		return i + 1, tGt
	case '!':
		if next == '=' {
			return i + 2, tNe
		}
	case ':':
		if next == ':' {
			return i + 2, tColons
		}
	}
	return i, tEOF
}
