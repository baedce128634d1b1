package sqldb

import (
	"regexp"
	"strconv"
	"strings"
)

// The stores' queries are written once, in the SQL that SQLite and PostgreSQL
// share, with SQLite's ? placeholders. Where the engines spell a thing
// differently and the difference is a matter of words, PostgreSQL's text is
// made from SQLite's by rewritePG, once per query (pgEngine.text); where they
// differ in kind (full-text search, the writer's group commit), each engine
// has code of its own. What rewritePG turns into PostgreSQL:
//
//	?, ?N                          $n, $N
//	json_each(X)                   json_array_elements_text(CAST(X AS json))  (its column: value)
//	json_each(X, '$.key')          json_array_elements_text(CAST(X AS json) -> 'key')
//	json_extract(X, '$.key')       (CAST(X AS json) ->> 'key')
//	json_extract(X, '$[' || E || ']')  (CAST(X AS json) ->> CAST(E AS int))
//	a LIKE b                       a ILIKE b  (SQLite's LIKE ignores case)
//	instr(a, b)                    strpos(a, b)
//	ifnull(a, b)                   coalesce(a, b)  (SQLite matches an index on an
//	                               expression only when a query writes it the same:
//	                               drive_files_live_name, drive_files_access)
//	INDEXED BY index               (nothing: PostgreSQL's planner takes no hints)
//	lower(hex(randomblob(6)))      12 random hexadecimal digits
//
// Written the same on both: coalesce, string_agg, IS [NOT] DISTINCT FROM,
// INSERT ... ON CONFLICT (target) DO ..., RETURNING, a column of the target
// table in an upsert's SET named with its table, COLLATE NOCASE (a collation
// of that name in PostgreSQL's schema). Scalar max and min of several values
// (SQLite) are greatest and least (PostgreSQL): see DB.greatest.
var (
	reJSONEachPath  = regexp.MustCompile(`json_each\(([^(),]+),\s*'\$\.(\w+)'\)`)
	reJSONEach      = regexp.MustCompile(`json_each\(([^(),]+)\)`)
	reJSONExtract   = regexp.MustCompile(`json_extract\(([^(),]+),\s*'\$\.(\w+)'\)`)
	reJSONExtractAt = regexp.MustCompile(`json_extract\(([^(),]+),\s*'\$\[' \|\| ([\w.]+) \|\| '\]'\)`)
	reIndexedBy     = regexp.MustCompile(`\s+INDEXED BY \w+`)
	reLike          = regexp.MustCompile(`\bLIKE\b`)
	reInstr         = regexp.MustCompile(`\binstr\(`)
	reIfnull        = regexp.MustCompile(`\bifnull\(`)
)

// rewritePG returns query, written for SQLite, in PostgreSQL's dialect.
func rewritePG(query string) string {
	q := reJSONEachPath.ReplaceAllString(query, "json_array_elements_text(CAST($1 AS json) -> '$2')")
	q = reJSONEach.ReplaceAllString(q, "json_array_elements_text(CAST($1 AS json))")
	q = reJSONExtractAt.ReplaceAllString(q, "(CAST($1 AS json) ->> CAST($2 AS int))")
	q = reJSONExtract.ReplaceAllString(q, "(CAST($1 AS json) ->> '$2')")
	q = reIndexedBy.ReplaceAllString(q, "")
	q = reLike.ReplaceAllString(q, "ILIKE")
	q = reInstr.ReplaceAllString(q, "strpos(")
	q = reIfnull.ReplaceAllString(q, "coalesce(")
	q = strings.ReplaceAll(q, "lower(hex(randomblob(6)))", "substr(md5(random()::text || clock_timestamp()::text), 1, 12)")
	return placeholdersPG(q)
}

// placeholdersPG numbers SQLite's placeholders as PostgreSQL's: each ? is
// the next number, ?N is N. A ? inside a string literal, a quoted name or a
// comment is left as it is.
func placeholdersPG(q string) string {
	if !strings.ContainsRune(q, '?') {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) && q[j] != c {
				j++
			}
			b.WriteString(q[i:min(j+1, len(q))])
			i = j
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j - 1
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if j > i+1 {
				b.WriteByte('$')
				b.WriteString(q[i+1 : j])
				i = j - 1
			} else {
				n++
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(n))
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// lastOutboxSeq is SQL for the last sequence number the outbox ever gave
// (0 before its first event), whether its event is kept or pruned.
func (db *DB) lastOutboxSeq() string {
	if db.pg != nil {
		return `(SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM outbox_seq_seq)`
	}
	return `coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'outbox'), 0)`
}

// indexes is SQL for a table of the schema's indexes with a column name.
func (db *DB) indexes() string {
	if db.pg != nil {
		return `(SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema()) AS i`
	}
	return `(SELECT name FROM sqlite_schema WHERE type = 'index') AS i`
}

// orderedAgg is the ORDER BY clause order inside an aggregate over a
// subquery that has the same order: SQLite aggregates the rows in the
// subquery's order (and would sort them again if asked), PostgreSQL
// promises no order unless asked.
func (db *DB) orderedAgg(order string) string {
	if db.pg != nil {
		return " " + order
	}
	return ""
}

// rowID is the name of a row's physical address in its table: SQLite's
// rowid, PostgreSQL's ctid (both valid until the row changes).
func (db *DB) rowID() string {
	if db.pg != nil {
		return "ctid"
	}
	return "rowid"
}

// greatest is SQL for the largest of the values: SQLite's scalar max,
// PostgreSQL's greatest.
func (db *DB) greatest(values ...string) string {
	f := "max"
	if db.pg != nil {
		f = "greatest"
	}
	return f + "(" + strings.Join(values, ", ") + ")"
}
