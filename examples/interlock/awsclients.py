"""AWS clients for the Interlock Lambdas. An endpoint comes from
AWS_ENDPOINT_URL_<SERVICE> or AWS_ENDPOINT_URL, read here because older
boto3 (Debian's 1.26) does not; unset, boto3 goes to AWS as usual. The
region is AWS_REGION's or AWS_DEFAULT_REGION's."""
import os

import boto3


def endpoint(service):
    return os.environ.get("AWS_ENDPOINT_URL_" + service.upper()) or os.environ.get("AWS_ENDPOINT_URL") or None


def region():
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None


def client(service):
    return boto3.client(service, endpoint_url=endpoint(service), region_name=region())


def table(name):
    return boto3.resource("dynamodb", endpoint_url=endpoint("dynamodb"), region_name=region()).Table(name)
