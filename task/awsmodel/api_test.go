package awsmodel

import "testing"

func TestOperation(t *testing.T) {
	for _, c := range []struct{ service, action, protocol, name string }{
		{"s3", "getObject", ProtocolRESTXML, "GetObject"},
		{"sfn", "startExecution", ProtocolJSON, "StartExecution"},
		{"eventbridge", "putEvents", ProtocolJSON, "PutEvents"},
		{"redshiftdata", "executeStatement", ProtocolJSON, "ExecuteStatement"},
		{"sns", "publish", ProtocolQuery, "Publish"},
		{"ec2", "describeInstances", ProtocolEC2, "DescribeInstances"},
		{"lambda", "invoke", ProtocolRESTJSON, "Invoke"},
		{"cloudwatchlogs", "putLogEvents", ProtocolJSON, "PutLogEvents"},
	} {
		api, op, ok, err := Operation(c.service, c.action)
		if err != nil || !ok {
			t.Fatalf("%s:%s: %v %v", c.service, c.action, ok, err)
		}
		if api.Protocol != c.protocol || op.Name != c.name {
			t.Errorf("%s:%s: protocol %s, name %s", c.service, c.action, api.Protocol, op.Name)
		}
	}
	if _, _, ok, _ := Operation("s3", "noSuchAction"); ok {
		t.Error("found s3:noSuchAction")
	}
	if api, _, ok, _ := Operation("nosuchservice", "x"); ok || api != nil {
		t.Error("found nosuchservice")
	}
	names, err := APIServices()
	if err != nil || len(names) < 400 {
		t.Errorf("APIServices: %d services, %v", len(names), err)
	}
	for _, name := range names {
		if api, err := loadAPI(name); err != nil || api == nil || len(api.Ops) == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}
