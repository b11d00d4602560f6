package parser

// tokKind is the lexical class of a token.
type tokKind uint8

const (
	tEOF     tokKind = iota
	tWord            // unquoted identifier or keyword; see token.kw
	tQuoted          // `backticked identifier`; decoded text in lexer values
	tInt             // integer literal, decimal or 0x hex
	tFloat           // floating point literal
	tString          // string literal; decoded value in lexer values
	tBytes           // bytes literal b'...'; decoded value in lexer values
	tParam           // @name; the name is the text after '@'
	tIllegal         // a character (or @@name) the grammar has no use for

	tLParen // (
	tRParen // )
	tLBrack // [
	tRBrack // ]
	tComma  // ,
	tDot    // .
	tSemi   // ;
	tStar   // *
	tPlus   // +
	tMinus  // -
	tSlash  // /
	tConcat // ||
	tPipe   // |
	tCaret  // ^
	tAmp    // &
	tTilde  // ~
	tShl    // <<
	tShr    // >>
	tEq     // =
	tNe     // != or <>
	tLt     // <
	tLe     // <=
	tGt     // >
	tGe     // >=
	tColons // ::
)

// token is one lexical token. Text is src[off:end]; string-like tokens keep
// their decoded value in the lexer's value table at index val. Tokens are kept
// small (16 bytes) because the whole input is tokenised up front; line and
// column are computed from off when a node or an error needs them.
type token struct {
	kind     tokKind
	kw       keyword // keyword id of a tWord, kwNone otherwise
	off, end int32
	val      int32 // index into values for tString, tBytes, tQuoted
}

// chainKeyword marks the keywords that continue a left-deep chain: infix
// operators, joins and set operations.
var chainKeyword = [numKeywords]bool{
	kwAnd: true, kwOr: true, kwIs: true, kwLike: true, kwBetween: true, kwIn: true,
	kwJoin: true, kwUnion: true, kwIntersect: true, kwExcept: true,
}

// keyword identifies the words the grammar gives a meaning to. Whether a
// keyword may also be used as an unquoted name is decided by reserved.
type keyword uint8

const (
	kwNone keyword = iota
	kwAll
	kwAnd
	kwArray
	kwAs
	kwAsc
	kwAt
	kwBetween
	kwBy
	kwCase
	kwCast
	kwCross
	kwCurrent
	kwDesc
	kwDistinct
	kwElse
	kwEnd
	kwExcept
	kwExists
	kwExtract
	kwFalse
	kwFirst
	kwFollowing
	kwFrom
	kwFull
	kwGroup
	kwHaving
	kwIf
	kwIgnore
	kwIn
	kwInner
	kwIntersect
	kwInterval
	kwInto
	kwIs
	kwJoin
	kwLast
	kwLateral
	kwLeft
	kwLike
	kwLimit
	kwNatural
	kwNot
	kwNull
	kwNulls
	kwOffset
	kwOn
	kwOr
	kwOrder
	kwOuter
	kwOver
	kwPartition
	kwPreceding
	kwQualify
	kwRange
	kwRecursive
	kwRespect
	kwRight
	kwRow
	kwRows
	kwSelect
	kwStruct
	kwThen
	kwTime
	kwTrue
	kwUnbounded
	kwUnion
	kwUnknown
	kwUnnest
	kwUsing
	kwWhen
	kwWhere
	kwWindow
	kwWith
	kwZone
	numKeywords
)

var keywordNames = [numKeywords]string{
	kwAll: "ALL", kwAnd: "AND", kwArray: "ARRAY", kwAs: "AS", kwAsc: "ASC", kwAt: "AT",
	kwBetween: "BETWEEN", kwBy: "BY", kwCase: "CASE", kwCast: "CAST", kwCross: "CROSS",
	kwCurrent: "CURRENT", kwDesc: "DESC", kwDistinct: "DISTINCT", kwElse: "ELSE", kwEnd: "END",
	kwExcept: "EXCEPT", kwExists: "EXISTS", kwExtract: "EXTRACT", kwFalse: "FALSE",
	kwFirst: "FIRST", kwFollowing: "FOLLOWING", kwFrom: "FROM", kwFull: "FULL", kwGroup: "GROUP",
	kwHaving: "HAVING", kwIf: "IF", kwIgnore: "IGNORE", kwIn: "IN", kwInner: "INNER",
	kwIntersect: "INTERSECT", kwInterval: "INTERVAL", kwInto: "INTO", kwIs: "IS", kwJoin: "JOIN",
	kwLast: "LAST", kwLateral: "LATERAL", kwLeft: "LEFT", kwLike: "LIKE", kwLimit: "LIMIT",
	kwNatural: "NATURAL", kwNot: "NOT", kwNull: "NULL", kwNulls: "NULLS", kwOffset: "OFFSET",
	kwOn: "ON", kwOr: "OR", kwOrder: "ORDER", kwOuter: "OUTER", kwOver: "OVER",
	kwPartition: "PARTITION", kwPreceding: "PRECEDING", kwQualify: "QUALIFY", kwRange: "RANGE",
	kwRecursive: "RECURSIVE", kwRespect: "RESPECT", kwRight: "RIGHT", kwRow: "ROW", kwRows: "ROWS",
	kwSelect: "SELECT", kwStruct: "STRUCT", kwThen: "THEN", kwTime: "TIME", kwTrue: "TRUE",
	kwUnbounded: "UNBOUNDED", kwUnion: "UNION", kwUnknown: "UNKNOWN", kwUnnest: "UNNEST",
	kwUsing: "USING", kwWhen: "WHEN", kwWhere: "WHERE", kwWindow: "WINDOW", kwWith: "WITH",
	kwZone: "ZONE",
}

// reserved marks keywords that cannot be used as unquoted column names,
// aliases or table names (outside a path after a dot, where any word is a
// name). It is BigQuery's reserved list restricted to the words that matter to
// this grammar; words like TIMESTAMP, DATE, TIME, LEVEL, STATUS, TYPE, USER,
// COUNT, OFFSET or RANGE stay usable as names, which Studio's queries rely on.
var reserved = [numKeywords]bool{
	kwAll: true, kwAnd: true, kwArray: true, kwAs: true, kwAsc: true, kwBetween: true,
	kwBy: true, kwCase: true, kwCast: true, kwCross: true, kwDesc: true, kwDistinct: true,
	kwElse: true, kwEnd: true, kwExcept: true, kwExists: true, kwExtract: true, kwFalse: true,
	kwFrom: true, kwFull: true, kwGroup: true, kwHaving: true, kwIf: true, kwIgnore: true,
	kwIn: true, kwInner: true, kwIntersect: true, kwInterval: true, kwInto: true, kwIs: true,
	kwJoin: true, kwLateral: true, kwLeft: true, kwLike: true, kwLimit: true, kwNatural: true,
	kwNot: true, kwNull: true, kwNulls: true, kwOn: true, kwOr: true, kwOrder: true,
	kwOuter: true, kwOver: true, kwQualify: true, kwRecursive: true, kwRespect: true,
	kwRight: true, kwSelect: true, kwStruct: true, kwThen: true, kwTrue: true, kwUnion: true,
	kwUnnest: true, kwUsing: true, kwWhen: true, kwWhere: true, kwWindow: true, kwWith: true,
}

// Keywords are found with a small perfect hash: kwHash of a word, folded to
// upper case, indexes kwTable; a hit is confirmed by comparing the spelling.
// kwSeed is chosen at start-up so that no two keywords share a slot.
const kwTableSize = 512

var kwTable, kwSeed = buildKeywordTable()

func kwHash(word string, seed uint32) uint32 {
	h := seed
	for i := 0; i < len(word); i++ {
		h = kwHashStep(h, word[i])
	}
	return kwHashEnd(h, len(word))
}

// kwHashStep and kwHashEnd are kwHash split so that the lexer can hash a
// word while scanning it. &^0x20 folds ASCII letters to upper case.
func kwHashStep(h uint32, c byte) uint32 { return (h ^ uint32(c&^0x20)) * 0x01000193 }

func kwHashEnd(h uint32, n int) uint32 {
	h ^= uint32(n) * 0x9E3779B1
	return (h ^ h>>15) & (kwTableSize - 1)
}

func buildKeywordTable() ([kwTableSize]keyword, uint32) {
	for seed := uint32(1); ; seed++ {
		var t [kwTableSize]keyword
		ok := true
		for k := kwNone + 1; k < numKeywords && ok; k++ {
			h := kwHash(keywordNames[k], seed)
			ok = t[h] == kwNone
			t[h] = k
		}
		if ok {
			return t, seed
		}
	}
}

// maxKeywordLen is the length of the longest keyword; longer words skip the
// lookup.
const maxKeywordLen = 9

// lookupKeyword returns the keyword spelled by word in any case, or kwNone.
// It does not allocate.
func lookupKeyword(word string) keyword {
	if len(word) < 2 || len(word) > maxKeywordLen {
		return kwNone
	}
	return keywordAt(word, kwHash(word, kwSeed))
}

// keywordAt confirms that word spells the keyword in slot h of kwTable.
func keywordAt(word string, h uint32) keyword {
	k := kwTable[h]
	if k == kwNone {
		return kwNone
	}
	name := keywordNames[k]
	if len(name) != len(word) {
		return kwNone
	}
	for i := 0; i < len(word); i++ {
		if word[i]&^0x20 != name[i] { // keywords are letters only, stored upper case
			return kwNone
		}
	}
	return k
}

// isReservedWord reports whether word (any case) is a reserved keyword, i.e.
// must be backticked to be used as a name.
func isReservedWord(word string) bool {
	return reserved[lookupKeyword(word)]
}
