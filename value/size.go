package value

// AppendWithin is Append for a value that must encode to at most max bytes:
// it stops as soon as the encoding is known to be longer and reports
// within false (dst then holds part of the encoding). A value built by
// sharing (the same array referenced many times, say) may stand for far
// more JSON than it holds in memory; this bounds the work and memory of
// finding out.
func AppendWithin(dst []byte, v any, max int) (out []byte, within bool) {
	limit := len(dst) + max
	dst, within = appendWithin(dst, v, limit)
	return dst, within && len(dst) <= limit
}

func appendWithin(dst []byte, v any, limit int) ([]byte, bool) {
	switch x := v.(type) {
	case string:
		if len(dst)+len(x)+2 > limit {
			return dst, false
		}
		return AppendString(dst, x), true
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendWithin(dst, e, limit); !ok || len(dst) > limit {
				return dst, false
			}
		}
		return append(dst, ']'), true
	case *Object:
		dst = append(dst, '{')
		for i, k := range x.keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k)
			dst = append(dst, ':')
			var ok bool
			if dst, ok = appendWithin(dst, x.vals[i], limit); !ok || len(dst) > limit {
				return dst, false
			}
		}
		return append(dst, '}'), true
	}
	return Append(dst, v), true
}

// SizeWithin returns the length of v's compact JSON encoding, counting
// each string as its bytes and quotes (escapes are not counted), and
// stops counting once it exceeds max (within false). It allocates nothing,
// and takes time in proportion to the smaller of the two, even for a value
// that shares one large part many times.
func SizeWithin(v any, max int) (n int, within bool) {
	n = sizeWithin(v, 0, max)
	return n, n <= max
}

func sizeWithin(v any, n, max int) int {
	switch x := v.(type) {
	case nil:
		return n + 4
	case bool:
		if x {
			return n + 4
		}
		return n + 5
	case Number:
		return n + len(x)
	case string:
		return n + len(x) + 2
	case []any:
		n += 2
		for i, e := range x {
			if i > 0 {
				n++
			}
			if n = sizeWithin(e, n, max); n > max {
				return n
			}
		}
		return n
	case *Object:
		n += 2
		for i, k := range x.keys {
			if i > 0 {
				n++
			}
			n += len(k) + 3
			if n = sizeWithin(x.vals[i], n, max); n > max {
				return n
			}
		}
		return n
	}
	return n + len(Append(nil, v))
}
