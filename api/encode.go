package api

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// The answers a loaded server gives most (StartExecution,
// DescribeExecution, ListExecutions, GetExecutionHistory) encode
// themselves: encoding/json spent more CPU on them, by reflection, than
// the store spent finding them (a page of 100 executions took 36 µs).
// Each writes exactly the bytes json.Marshal writes for it (FuzzAnswers
// holds them to that), so clients see no difference.

// appender is an answer that appends its JSON encoding to b.
type appender interface {
	appendJSON(b []byte) []byte
}

// startAnswer is StartExecution's answer.
type startAnswer struct {
	ExecutionArn string   `json:"executionArn"`
	StartDate    *float64 `json:"startDate"`
}

func (a *startAnswer) appendJSON(b []byte) []byte {
	b = append(b, `{"executionArn":`...)
	b = appendString(b, a.ExecutionArn)
	b = append(b, `,"startDate":`...)
	b = appendFloatPtr(b, a.StartDate)
	return append(b, '}')
}

func (d *executionDescription) appendJSON(b []byte) []byte {
	b = appendExecution(b, d.ExecutionArn, d.StateMachineArn, d.Name, d.Status, d.StartDate, d.StopDate)
	b = appendOptString(b, `,"input":`, d.Input)
	b = append(b, `,"inputDetails":`...)
	b = d.InputDetails.appendJSON(b)
	if d.Output != nil {
		b = append(b, `,"output":`...)
		b = appendString(b, *d.Output)
	}
	if d.OutputDetails != nil {
		b = append(b, `,"outputDetails":`...)
		b = d.OutputDetails.appendJSON(b)
	}
	b = appendOptString(b, `,"error":`, d.Error)
	b = appendOptString(b, `,"cause":`, d.Cause)
	b = appendOptString(b, `,"traceHeader":`, d.TraceHeader)
	if d.RedriveCount != nil {
		b = append(b, `,"redriveCount":`...)
		b = strconv.AppendInt(b, int64(*d.RedriveCount), 10)
	}
	b = appendOptString(b, `,"redriveStatus":`, d.RedriveStatus)
	b = appendOptString(b, `,"redriveStatusReason":`, d.RedriveStatusReason)
	if d.RedriveDate != nil {
		b = append(b, `,"redriveDate":`...)
		b = appendFloat(b, *d.RedriveDate)
	}
	b = appendOptString(b, `,"mapRunArn":`, d.MapRunArn)
	if d.BillingDetails != nil {
		b = append(b, `,"billingDetails":{"billedMemoryUsedInMB":`...)
		b = strconv.AppendInt(b, int64(d.BillingDetails.BilledMemoryUsedInMB), 10)
		b = append(b, `,"billedDurationInMilliseconds":`...)
		b = strconv.AppendInt(b, int64(d.BillingDetails.BilledDurationInMilliseconds), 10)
		b = append(b, '}')
	}
	b = appendOptString(b, `,"stateMachineVersionArn":`, d.StateMachineVersionArn)
	b = appendOptString(b, `,"stateMachineAliasArn":`, d.StateMachineAliasArn)
	return append(b, '}')
}

func (d includedDetails) appendJSON(b []byte) []byte {
	if d.Included {
		return append(b, `{"included":true}`...)
	}
	return append(b, `{"included":false}`...)
}

func (it *executionItem) appendJSON(b []byte) []byte {
	b = appendExecution(b, it.ExecutionArn, it.StateMachineArn, it.Name, it.Status, it.StartDate, it.StopDate)
	b = appendOptString(b, `,"stateMachineVersionArn":`, it.StateMachineVersionArn)
	b = appendOptString(b, `,"stateMachineAliasArn":`, it.StateMachineAliasArn)
	b = appendOptString(b, `,"mapRunArn":`, it.MapRunArn)
	if it.RedriveCount != nil {
		b = append(b, `,"redriveCount":`...)
		b = strconv.AppendInt(b, int64(*it.RedriveCount), 10)
	}
	if it.RedriveDate != nil {
		b = append(b, `,"redriveDate":`...)
		b = appendFloat(b, *it.RedriveDate)
	}
	return append(b, '}')
}

// listAnswer is a list operation's answer: the items under key, and the token of
// the next page when there is one. json.Marshal writes it as it writes the
// map {key: items, "nextToken": next}, keys in order.
type listAnswer[I any] struct {
	key   string
	items []I
	next  string
}

func (p *listAnswer[I]) appendJSON(b []byte) []byte {
	b = append(b, '{')
	if p.next != "" && "nextToken" < p.key {
		b = append(b, `"nextToken":`...)
		b = appendString(b, p.next)
		b = append(b, ',')
	}
	b = appendString(b, p.key)
	b = append(b, ':')
	if p.items == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range p.items {
			if i > 0 {
				b = append(b, ',')
			}
			if a, ok := any(&p.items[i]).(appender); ok {
				b = a.appendJSON(b)
				continue
			}
			v, err := json.Marshal(p.items[i])
			if err != nil {
				return nil
			}
			b = append(b, v...)
		}
		b = append(b, ']')
	}
	if p.next != "" && "nextToken" > p.key {
		b = append(b, `,"nextToken":`...)
		b = appendString(b, p.next)
	}
	return append(b, '}')
}

// history is GetExecutionHistory's answer: each event's JSON (compact, as
// the engine recorded it), and the token of the next page.
type history struct {
	events [][]byte
	next   string
}

func (h *history) appendJSON(b []byte) []byte {
	b = append(b, `{"events":`...)
	if h.events == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, ev := range h.events {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendHTMLSafe(b, ev)
		}
		b = append(b, ']')
	}
	if h.next != "" {
		b = append(b, `,"nextToken":`...)
		b = appendString(b, h.next)
	}
	return append(b, '}')
}

// appendExecution opens an execution's object with the members a
// description and a list item share, in their order.
func appendExecution(b []byte, arn, smARN, name, status string, start, stop *float64) []byte {
	b = append(b, `{"executionArn":`...)
	b = appendString(b, arn)
	b = append(b, `,"stateMachineArn":`...)
	b = appendString(b, smARN)
	b = append(b, `,"name":`...)
	b = appendString(b, name)
	b = append(b, `,"status":`...)
	b = appendString(b, status)
	b = append(b, `,"startDate":`...)
	b = appendFloatPtr(b, start)
	if stop != nil {
		b = append(b, `,"stopDate":`...)
		b = appendFloat(b, *stop)
	}
	return b
}

func appendOptString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, key...)
	return appendString(b, s)
}

func appendFloatPtr(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	return appendFloat(b, *f)
}

// appendFloat appends f as encoding/json writes a float64 (f is a date in
// seconds, never NaN or infinite).
func appendFloat(b []byte, f float64) []byte {
	if f >= 0 && f < 1e12 {
		// Whole milliseconds: their digits are the shortest that read
		// back as f (doubles below 1e12 are closer together than 0.0005).
		if ms := int64(math.Round(f * 1000)); float64(ms)/1000 == f {
			b = strconv.AppendInt(b, ms/1000, 10)
			if frac := ms % 1000; frac != 0 {
				digits := [4]byte{'.', byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
				n := 4
				for digits[n-1] == '0' {
					n--
				}
				b = append(b, digits[:n]...)
			}
			return b
		}
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	n := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json writes it.
		if m := len(b) - n; m >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
	}
	return b
}

// appendString appends s as a JSON string as encoding/json writes it:
// invalid UTF-8 as the escape \ufffd, and <, >, &, U+2028 and U+2029
// escaped (value.AppendString, the engine's, escapes none of them).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += n
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigit[r&0xf])
			i += n
			start = i
			continue
		}
		i += n
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigit = "0123456789abcdef"

// htmlSafe are the ASCII bytes a JSON string holds as they are.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendHTMLSafe appends the compact JSON text js as encoding/json embeds a
// json.RawMessage: with <, >, &, U+2028 and U+2029 escaped.
func appendHTMLSafe(b, js []byte) []byte {
	start := 0
	for i := 0; i < len(js); i++ {
		c := js[i]
		if c == '<' || c == '>' || c == '&' {
			b = append(b, js[start:i]...)
			b = append(b, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
			start = i + 1
		}
		// U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
		if c == 0xE2 && i+2 < len(js) && js[i+1] == 0x80 && js[i+2]&^1 == 0xA8 {
			b = append(b, js[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigit[js[i+2]&0xf])
			i += 2
			start = i + 1
		}
	}
	return append(b, js[start:]...)
}
