package sqlrow

import (
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/internal/codec"
)

// NoticeColumns are the columns of a notice, in ScanNotice's order.
const NoticeColumns = `id, exec_arn, status, at, attempts`

// ScanNotice scans a notice (NoticeColumns).
func ScanNotice(row Scanner) (*store.Notice, error) {
	var n store.Notice
	var at int64
	if err := row.Scan(&n.ID, &n.ExecutionARN, &n.Status, &at, &n.Attempts); err != nil {
		return nil, err
	}
	n.At = codec.FromNanos(at)
	return &n, nil
}
