package bench

import (
	"errors"

	"github.com/stepd/stepd/value"
)

// functions are the in-process Task functions of the workloads, by the name
// that ends their Resource ARN; they compute what the peer runner's
// functions compute.
var functions = map[string]func(in *value.Object) (any, error){
	"Noop": func(in *value.Object) (any, error) { return in, nil },
	"Increment": func(in *value.Object) (any, error) {
		i, err := num(in, "i")
		if err != nil {
			return nil, err
		}
		n, _ := in.Get("n")
		return value.ObjectOf("i", value.Int(i+1), "n", n), nil
	},
	"FetchNotificationCount": func(in *value.Object) (any, error) {
		count, _ := in.Get("notification_count")
		users, _ := in.Get("user_accounts")
		u := value.AsObject(users)
		if u == nil {
			return nil, errors.New("user_accounts is not an object")
		}
		return value.ObjectOf("notification_count", count, "notification_user_accounts", users,
			"notification_user_count", value.Int(int64(u.Len())), "is_first_alert", true, "notified", value.Int(0)), nil
	},
	"DecrementNotificationUserCount": func(in *value.Object) (any, error) {
		users, _ := in.Get("notification_user_accounts")
		u := value.AsObject(users)
		if u == nil {
			return nil, errors.New("notification_user_accounts is not an object")
		}
		out := in.Clone()
		out.Set("notification_user_count", value.Int(int64(u.Len()-1)))
		out.Set("is_first_alert", false)
		return out, nil
	},
	"NotifyAlerts": func(in *value.Object) (any, error) {
		count, err := num(in, "notification_count")
		if err != nil {
			return nil, err
		}
		users, err := num(in, "notification_user_count")
		if err != nil {
			return nil, err
		}
		notified, err := num(in, "notified")
		if err != nil {
			return nil, err
		}
		if users == 0 {
			count--
		}
		out := in.Clone()
		out.Set("notification_count", value.Int(count))
		out.Set("notification_user_count", value.Int(users-1))
		out.Set("notified", value.Int(notified+1))
		return out, nil
	},
}

func num(in *value.Object, key string) (int64, error) {
	if in == nil {
		return 0, errors.New("the input is not an object")
	}
	v, _ := in.Get(key)
	n, ok := v.(value.Number)
	if !ok {
		return 0, errors.New(key + " is not a number")
	}
	i, ok := n.Int64()
	if !ok {
		return 0, errors.New(key + " is not an integer")
	}
	return i, nil
}
