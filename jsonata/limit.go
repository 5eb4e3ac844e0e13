package jsonata

import "fmt"

// maxNesting is the deepest nesting of parentheses, brackets and braces an
// expression may have. gnata's parser takes time that grows with the square
// of the nesting depth (100,000 nested parentheses took 12 s), so deeper
// expressions are refused before they reach it; no expression written by
// hand comes near the limit.
const maxNesting = 200

// checkNesting scans src once, skipping string literals, quoted names and
// comments, and reports an expression nested deeper than maxNesting.
func checkNesting(src string) error {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '(', '[', '{':
			depth++
			if depth > maxNesting {
				return &Error{Code: "S0201", Token: string(c), Message: fmt.Sprintf(
					"Syntax error: the expression nests more than %d levels of parentheses, brackets and braces (at offset %d)", maxNesting, i)}
			}
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case '"', '\'', '`':
			// A string literal or a quoted name: skip to its closing
			// quote, past escaped characters.
			for i++; i < len(src) && src[i] != c; i++ {
				if src[i] == '\\' && c != '`' {
					i++
				}
			}
		case '/':
			if i+1 < len(src) && src[i+1] == '*' {
				end := indexFrom(src, "*/", i+2)
				if end < 0 {
					return nil // the parser reports the unclosed comment
				}
				i = end + 1
			}
		}
	}
	return nil
}

func indexFrom(s, sub string, from int) int {
	for j := from; j+len(sub) <= len(s); j++ {
		if s[j:j+len(sub)] == sub {
			return j
		}
	}
	return -1
}
