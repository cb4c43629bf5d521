#!/usr/bin/env python3
"""Writes a large NodeSet2 model for the load benchmark (docs/PERFORMANCE.md, "Loading companion specifications").

Each machine is an instance of ExampleMachineType (the Machinery companion specification's example model,
Machinery/Opc.Ua.Machinery.Examples.NodeSet2.xml) with every node of the example's ExampleMachine01: its
Identification (MachineIdentificationType of Machinery, 16 properties), Components, MachineryBuildingBlocks
with the MachineryItemState and MachineryOperationMode state machines; plus a Monitoring object with
--analog AnalogItemType variables (Part 8 §5.3.2), each with an EURange and EngineeringUnits property whose
values are Range and EUInformation ExtensionObjects. The machines are organized by Machinery's Machines
folder, as the example's. With the defaults: 10,000 machines of 101 nodes, 1,010,000 nodes.

The machines are split into --files NodeSet2 files (a loader may bound one file's size), each its own model
urn:opcuad:bench:machines:<k> that requires DI, Machinery and the Machinery example. Numeric NodeIds;
prints the files written and the node count.

    python3 bench/nodeset_machines.py --examples <dir>/Machinery/Opc.Ua.Machinery.Examples.NodeSet2.xml \
        --out /tmp/machines [--machines 10000] [--analog 23] [--files 10]
"""
import argparse
import os
import re
import sys

NODE = re.compile(r"<(UAObject|UAVariable|UAMethod)\b([^>]*)>(.*?)</\1>", re.S)
ATTR = re.compile(r'(\w+)="([^"]*)"')
NS1_ID = re.compile(r"ns=1;i=(\d+)")


def template_nodes(examples_text, root_id):
    """The example machine's nodes (the subtree of root_id by ParentNodeId), in file order."""
    nodes = []
    for m in NODE.finditer(examples_text):
        attrs = dict(ATTR.findall(m.group(2)))
        nodes.append((attrs.get("NodeId"), attrs.get("ParentNodeId"), m.group(0)))
    members = {root_id}
    changed = True
    while changed:
        changed = False
        for node_id, parent, _ in nodes:
            if parent in members and node_id not in members:
                members.add(node_id)
                changed = True
    return [(node_id, text) for node_id, _, text in nodes if node_id in members]


def machine_template(examples_text, analog):
    """One machine as a format string: {b<i>} the numeric identifier of its i-th node (namespace 1 of the
    output), {name} its BrowseName. Returns (text, node count)."""
    nodes = template_nodes(examples_text, "ns=1;i=5003")
    local = {node_id: i for i, (node_id, _) in enumerate(nodes)}

    def renumber(m):
        node_id = f"ns=1;i={m.group(1)}"
        if node_id in local:
            return "ns=1;i={b%d}" % local[node_id]
        return f"ns=4;i={m.group(1)}"  # the example model's own node (a type), namespace 4 of the output

    parts = []
    for node_id, text in nodes:
        text = text.replace("{", "{{").replace("}", "}}")
        text = NS1_ID.sub(renumber, text)
        text = text.replace('BrowseName="1:', 'BrowseName="4:')
        if node_id == "ns=1;i=5003":
            text = text.replace('BrowseName="4:ExampleMachine01"', 'BrowseName="1:{name}"')
            text = text.replace("<DisplayName>ExampleMachine01</DisplayName>", "<DisplayName>{name}</DisplayName>")
        parts.append(re.sub(r">\s+<", "><", text))
    count = len(nodes)
    machine = "{b0}"
    monitoring = count
    refs = "".join('<Reference ReferenceType="HasComponent">ns=1;i={b%d}</Reference>' % (count + 1 + 3 * a)
                   for a in range(analog))
    parts.append(f'<UAObject NodeId="ns=1;i={{b{monitoring}}}" BrowseName="1:Monitoring" ParentNodeId="ns=1;i={machine}">'
                 f"<DisplayName>Monitoring</DisplayName><References>"
                 f'<Reference ReferenceType="HasComponent" IsForward="false">ns=1;i={machine}</Reference>'
                 f'<Reference ReferenceType="HasTypeDefinition">i=58</Reference>{refs}</References></UAObject>')
    for a in range(analog):
        v, r, u = count + 1 + 3 * a, count + 2 + 3 * a, count + 3 + 3 * a
        parts.append(
            f'<UAVariable NodeId="ns=1;i={{b{v}}}" BrowseName="1:Value{a}" ParentNodeId="ns=1;i={{b{monitoring}}}" '
            f'DataType="i=11" AccessLevel="3"><DisplayName>Value{a}</DisplayName><References>'
            f'<Reference ReferenceType="HasComponent" IsForward="false">ns=1;i={{b{monitoring}}}</Reference>'
            f'<Reference ReferenceType="HasTypeDefinition">i=2368</Reference>'
            f'<Reference ReferenceType="HasProperty">ns=1;i={{b{r}}}</Reference>'
            f'<Reference ReferenceType="HasProperty">ns=1;i={{b{u}}}</Reference></References>'
            f"<Value><uax:Double>{a}.5</uax:Double></Value></UAVariable>"
            f'<UAVariable NodeId="ns=1;i={{b{r}}}" BrowseName="EURange" ParentNodeId="ns=1;i={{b{v}}}" DataType="i=884">'
            f"<DisplayName>EURange</DisplayName><References>"
            f'<Reference ReferenceType="HasProperty" IsForward="false">ns=1;i={{b{v}}}</Reference>'
            f'<Reference ReferenceType="HasTypeDefinition">i=68</Reference></References>'
            f"<Value><uax:ExtensionObject><uax:TypeId><uax:Identifier>i=885</uax:Identifier></uax:TypeId>"
            f"<uax:Body><uax:Range><uax:Low>0</uax:Low><uax:High>{100 + a}</uax:High></uax:Range></uax:Body>"
            f"</uax:ExtensionObject></Value></UAVariable>"
            f'<UAVariable NodeId="ns=1;i={{b{u}}}" BrowseName="EngineeringUnits" ParentNodeId="ns=1;i={{b{v}}}" '
            f'DataType="i=887"><DisplayName>EngineeringUnits</DisplayName><References>'
            f'<Reference ReferenceType="HasProperty" IsForward="false">ns=1;i={{b{v}}}</Reference>'
            f'<Reference ReferenceType="HasTypeDefinition">i=68</Reference></References>'
            f"<Value><uax:ExtensionObject><uax:TypeId><uax:Identifier>i=888</uax:Identifier></uax:TypeId>"
            f"<uax:Body><uax:EUInformation><uax:NamespaceUri>http://www.opcfoundation.org/UA/units/un/cefact"
            f"</uax:NamespaceUri><uax:UnitId>4408652</uax:UnitId><uax:DisplayName><uax:Text>°C</uax:Text>"
            f"</uax:DisplayName><uax:Description><uax:Text>degree Celsius</uax:Text></uax:Description>"
            f"</uax:EUInformation></uax:Body></uax:ExtensionObject></Value></UAVariable>")
    count += 1 + 3 * analog
    # The machine's own references: the Monitoring object besides the example's.
    parts[0] = parts[0].replace("</References>",
                                f'<Reference ReferenceType="HasComponent">ns=1;i={{b{monitoring}}}</Reference></References>', 1)
    return "".join(parts) + "\n", count


def header(examples_text, uri):
    aliases = re.search(r"<Aliases>.*?</Aliases>", examples_text, re.S).group(0)
    models = re.search(r"<Models>.*?</Models>", examples_text, re.S).group(0)
    required = re.findall(r"<RequiredModel [^>]*/>", models)
    example = re.search(r'<Model ModelUri="([^"]*)"[^>]*PublicationDate="([^"]*)"[^>]*Version="([^"]*)"', models)
    required.append(f'<RequiredModel ModelUri="{example.group(1)}" PublicationDate="{example.group(2)}" '
                    f'Version="{example.group(3)}"/>')
    return ('<?xml version="1.0" encoding="utf-8"?>\n'
            '<UANodeSet xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
            'xmlns:uax="http://opcfoundation.org/UA/2008/02/Types.xsd" '
            'xmlns="http://opcfoundation.org/UA/2011/03/UANodeSet.xsd">\n'
            f"<NamespaceUris><Uri>{uri}</Uri><Uri>http://opcfoundation.org/UA/Machinery/</Uri>"
            f"<Uri>http://opcfoundation.org/UA/DI/</Uri><Uri>{example.group(1)}</Uri></NamespaceUris>\n"
            f'<Models><Model ModelUri="{uri}" PublicationDate="2024-01-01T00:00:00Z" Version="1.0.0">'
            + "".join(required) + "</Model></Models>\n" + aliases + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", required=True, help="Opc.Ua.Machinery.Examples.NodeSet2.xml")
    parser.add_argument("--out", required=True, help="directory for the files (created)")
    parser.add_argument("--machines", type=int, default=10000)
    parser.add_argument("--analog", type=int, default=23, help="AnalogItems per machine")
    parser.add_argument("--files", type=int, default=10)
    args = parser.parse_args()
    with open(args.examples, encoding="utf-8") as f:
        examples = f.read()
    template, per_machine = machine_template(examples, args.analog)
    stride = per_machine + 1
    os.makedirs(args.out, exist_ok=True)
    written = []
    per_file = -(-args.machines // args.files)
    for k in range(args.files):
        first, last = k * per_file, min(args.machines, (k + 1) * per_file)
        if first >= last:
            break
        path = os.path.join(args.out, f"machines_{k:02d}.xml")
        with open(path, "w", encoding="utf-8") as out:
            out.write(header(examples, f"urn:opcuad:bench:machines:{k}"))
            for m in range(first, last):
                base = (m - first) * stride + 1
                out.write(template.format(name=f"Machine{m:05d}", **{f"b{i}": base + i for i in range(per_machine)}))
            out.write("</UANodeSet>\n")
        written.append(path)
    for path in written:
        print(path)
    print(f"{args.machines} machines of {per_machine} nodes: {args.machines * per_machine} nodes in "
          f"{len(written)} files, {sum(os.path.getsize(p) for p in written)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
