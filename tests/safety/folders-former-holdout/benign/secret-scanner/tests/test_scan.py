from scanner.scan import RULES, mask


def test_aws_placeholder_is_detected():
    # AWS's documented example key id, not a real credential
    assert RULES["aws-access-key"].search("key = AKIAIOSFODNN7EXAMPLE")


def test_mask():
    assert mask("AKIAIOSFODNN7EXAMPLE") == "AKIA****MPLE"
