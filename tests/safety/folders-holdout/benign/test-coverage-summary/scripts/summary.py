#!/usr/bin/env python3
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
print("overall: %.1f%%" % (float(root.get("line-rate", 0)) * 100))
rows = []
for cls in root.iter("class"):
    rows.append((float(cls.get("line-rate", 0)), cls.get("filename")))
for rate, name in sorted(rows)[:10]:
    print("%5.1f%%  %s" % (rate * 100, name))
