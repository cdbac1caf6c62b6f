#!/usr/bin/env python3
# Regenerates jinja2_reference_cases.inc: renders each case with Jinja2 under
# transformers' chat-template settings. Usage:
#   python3 gen_reference_cases.py > jinja2_reference_cases.inc
import json, sys
from datetime import datetime
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.ext import loopcontrols
def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
env.filters['tojson'] = tojson
env.globals['strftime_now'] = lambda f: datetime(2024,7,26).strftime(f)

C = {}
C['Whitespace'] = [
 ("a\n  {# comment #}\nb\n    {%- if true %}\nc {{ 1 }}\n  {%- endif %}\n  d", {}),
 ("{% for x in [1,2] -%}\n  {{ x }}\n{%- endfor %}", {}),
 ("  {{- 'a' }}\n  {% set x = 1 %}  trailing\n\t{% if true %}tab{% endif %}\n", {}),
 ("x {% if true %}\ny{% endif %} z", {}),
 ("{# multi\nline #}   after", {}),
 ("{% raw -%}\n   {{ x }}\n{%- endraw %}", {}),
 ("a\n  {% raw %}\n  x{{y}}\n  {% endraw %}\nb", {}),
 ("text {{ 'a' }}   {% if true %}  b{% endif %}", {}),
 ("a  {%- if true -%}  b  {%- endif -%}  c {{- ' d ' -}} e", {}),
 ("a\n{%+ if true +%}\nb\n{% endif %}\n", {}),
 ("{% if true %}x{% endif %}\n\n", {}),
 ("{% if true %}\n    indented\n{% endif %}\n", {}),
 ("{%- for m in messages -%}\n{%- if m.role == 'user' -%}\nU: {{ m.content }}\n{% elif m.role == 'assistant' -%}\nA: {{ m.content }}\n{% endif -%}\n{%- endfor -%}",
  {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}),
 ("line\r\nwindows\r\n{% if true %}\r\nx\r\n{% endif %}\r\n", {}),
]
C['Loops'] = [
 ("{% for x in [1,2,3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.cycle('a','b') }};{% endfor %}", {}),
 ("{% for x in [1,2,3,4,5] if x is odd %}{{ x }}{{ loop.index }}{{ loop.last }};{% else %}none{% endfor %}|{% for x in [] %}a{% else %}empty{% endfor %}", {}),
 ("{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}", {}),
 ("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}{% for k in {'a': 1, 'b': 2} %}{{ k }}{% endfor %}{% for a, b in [[1,2],[3,4]] %}{{ a+b }}{% endfor %}", {}),
 ("{% set c = 0 %}{% for i in range(3) %}{{ c }}{% set c = c + 1 %}{{ c }};{% endfor %}{{ c }}", {}),
 ("{% for x in [1, 2] %}{% set y = x %}{% endfor %}{{ y }}|{% set y = 0 %}{% if true %}{% set y = 5 %}{% endif %}{{ y }}", {}),
 ("{% for i in [1,2] %}{% for j in [3,4] %}{{ loop.index }}{{ i }}{{ j }} {% endfor %}{{ loop.index }};{% endfor %}", {}),
 ("{% for x in 'h\u00e9y' %}{{ x }}.{% endfor %}", {}),
 ("{% for x in xs %}{{ loop.changed(x) }}{% endfor %}", {"xs": [1, 1, 2, 2, 1]}),
 ("{% for message in messages[::-1] %}{{ loop.index0 }}{{ message }}{% endfor %}", {"messages": [1, 2, 3]}),
 ("{% for m in messages %}{% if loop.previtem and loop.previtem.role != 'tool' %}<{% endif %}{{ m.role }}{% if not loop.last and loop.nextitem.role != 'tool' %}>{% endif %}{% endfor %}",
  {"messages": [{"role": "user"}, {"role": "tool"}, {"role": "tool"}, {"role": "assistant"}]}),
 ("{{ loop }}|{% for x in u %}never{% endfor %}", {}),
]
C['Namespace'] = [
 ("{% set ns = namespace(a=1) %}{{ ns.a }}{% set ns.a = 5 %}{{ ns.a }}{{ ns.b }}|{{ ns }}", {}),
 ("{% set ns = namespace(items=[]) %}{% for i in range(3) %}{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.items }}", {}),
 ("{% set ns = namespace() %}{% set ns.index = 0 %}{% for m in [1, 2, 3] %}{% set ns.index = ns.index + m %}{% endfor %}{{ ns.index }}", {}),
 ("{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = 1, 2 %}{{ t }}", {}),
 ("{% set x %}inner {{ 1 }}{% endset %}[{{ x }}]{% set y | upper %}shout{% endset %}{{ y }}", {}),
 ("{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}{{ a }}", {}),
]
C['Macros'] = [
 ("{% macro m(a, b=2) %}{{a}}{{b}}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1) }}|{{ m(1, 3, 4, x=5) }}|{{ m(b=7, a=1) }}", {}),
 ("{% macro f(a, b=a*2) %}{{ a }},{{ b }}{% endmacro %}{{ f(1) }}|{{ f(1, 5) }}", {}),
 ("{% macro rec(n) %}{% if n > 0 %}{{ n }}{{ rec(n - 1) }}{% endif %}{% endmacro %}{{ rec(5) }}", {}),
 ("{% macro wrap() %}[{{ caller() }}]{% endmacro %}{% call wrap() %}inside{% endcall %}{% macro w2(x) %}<{{ caller(x * 2) }}>{% endmacro %}{% call(v) w2(21) %}v={{ v }}{% endcall %}", {}),
 ("{% macro outer() %}{% for i in range(2) %}{{ inner(i) }}{% endfor %}{% endmacro %}{% macro inner(x) %}<{{ x }}>{% endmacro %}{{ outer() }}", {}),
 ("{% macro m() %}{{ g }}{% endmacro %}{% set g = 7 %}{{ m() }}{{ m }}", {}),
 ("{% filter upper %}hello {{ 'w' }}{% endfilter %}", {}),
]
C['Filters'] = [
 ("{{ x }}|{{ x|default('d') }}|{{ none|default('d') }}|{{ none|default('d', true) }}|{{ ''|d('e', true) }}", {}),
 ("{{ 'x'|center(6) }}|{{ 'ab'|indent(2, true) }}|{{ 'a\\nb\\n\\nc'|indent }}|{{ 'a\\nb\\n\\nc'|indent(2, blank=true) }}|{{ 1|string }}|{{ [1,2]|join(',') }}|{{ 'xy'|center(7) }}", {}),
 ("{{ [3,1,2]|sort }}{{ ['b','A','a']|sort }}{{ ['b','A','a']|unique|list }}{{ {'b':1,'a':2}|dictsort }}{{ [3,1,2]|sort(reverse=true) }}{{ ['b','A','a']|sort(case_sensitive=true) }}", {}),
 ("{{ [1,2,3]|select('odd')|list }}{{ [1,2,3]|map('string')|list }}{{ [{'a':1},{'b':2}]|map(attribute='a')|list }}{{ [0,1,2]|select|list }}{{ [1,2,3]|reject('odd')|list }}", {}),
 ("{{ [1,2,3]|first }}{{ [1,2,3]|last }}{{ []|first }}{{ 'abc'|first }}{{ [1,2,3]|length }}{{ 'h\u00e9llo'|length }}{{ {'a':1}|length }}{{ x|length }}{{ [1,2,3]|sum }}{{ [1,5,3]|max }}{{ [4,2,3]|min }}{{ [1,2]|reverse|list }}{{ 'abc'|reverse }}", {}),
 ("{{ '3'|int }}{{ '3.7'|int }}{{ 'x'|int }}{{ 'x'|int(5) }}{{ 3.9|int }}{{ '0x1A'|int(0, 16) }}{{ '2.5'|float }}{{ 'x'|float }}{{ 3|float }}{{ -3|abs }}{{ '1_000'|int }}", {}),
 ("{{ [{'r': 'u', 'n': 1}, {'r': 'a', 'n': 2}, {'r': 'u', 'n': 3}]|selectattr('r', 'equalto', 'u')|map(attribute='n')|list }}{{ [{'r': 'u'}, {'r': 'a'}]|rejectattr('r', 'eq', 'u')|list }}{{ [{'x': 1}, {'x': 0}, {}]|selectattr('x')|list }}", {}),
 ("{{ [{'n': 'b'}, {'n': 'a'}]|sort(attribute='n') }}{{ [{'n': 2}, {'n': 3}]|sum(attribute='n') }}{{ [{'n': 'b'}, {'n': 'a'}]|map(attribute='n')|join(', ') }}", {}),
 ("{{ {'b': 1, 'a': 2}|items|list }}{{ x|items|list }}", {}),
 ("{{ 2.5|round }} {{ 3|round }} {{ 2.675|round(2) }} {{ -2.5|round }} {{ 2.5|round(0,'floor') }} {{ 2.1|round(0, 'ceil') }}", {}),
 ("{{ '\u3000x\u00a0'|trim }}|{{ none|trim }}|{{ none|string }}|{{ x|trim }}|{{ [1,'a']|string }}|{{ '\u00c0\u00c9'|lower }}|{{ 'stra\u00dfe'|upper }}|{{ 'xxaxx'|trim('x') }}", {}),
 ("{{ 'Hello World'|wordcount }}{{ '%s, %s' | format('a', 'b') }}{{ '<a>&'|e }}{{ 'x'|safe }}{{ 'hello'|title }}{{ 'a-b c_d'|title }}{{ 'aBC'|capitalize }}", {}),
 ("{{ 'aaa'|replace('a', 'b', 2) }}{{ 'abc'|replace('b', 'X') }}{{ 'abc'|replace('', '-') }}", {}),
]
C['Tojson'] = [
 ("{{ {'b': 1, 'a': [1, 2.5, '\u00e9', none, true]}|tojson }}|{{ {'b': 1, 'a': [1, {}]}|tojson(indent=2) }}|{{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }}|{{ 'q\"\\\\\\n\\t\\u0001'|tojson }}|{{ [[]]|tojson(indent=2) }}", {}),
 ("{{ tools | tojson(indent=4) }}", {"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}, "required": []}}}]}),
 ("{{ x | tojson(separators=(',', ':')) }}{{ x|tojson(indent='\\t') }}{{ x|tojson(true) }}", {"x": {"a": [1, 2], "\u00e9": "\u00fc \U0001F600", "n": 1.0, "f": 0.5, "big": 12345678901234}}),
 ("{{ [1, [2, [3]]]|tojson }}{{ ''|tojson }}{{ none|tojson }}{{ true|tojson }}{{ 1e-7|tojson }}{{ 3.0|tojson }}{{ (1, 2)|tojson }}", {}),
]
C['Slicing'] = [
 ("{{ 'abc'[::-1] }}{{ 'abc'[5] }}|{{ [1,2][5] }}|{{ none.x }}|{{ 'h\u00e9llo'[1] }}|{{ 'h\u00e9llo'[1:3] }}|{{ [1,2,3,4,5][1:-1:2] }}|{{ [1,2,3][::-2] }}|{{ 'abc'[-1] }}|{{ [1,2,3][-5:10] }}", {}),
 ("{{ [1,2,3][1:] }}{{ [1,2,3][:-1] }}{{ 'hello'[:-1] }}{{ (1,2,3)[1:] }}{{ '\u65e5\u672c\u8a9e'[1:] }}{{ x[0] }}{{ x.0 }}{{ x[-1] }}", {"x": [7, 8]}),
]
C['Python'] = [
 ("{{ 1.0 }} {{ 1e-5 }} {{ 0.1+0.2 }} {{ 1e16 }} {{ 1e22 }} {{ 3/2 }} {{ 4/2 }} {{ 7//2 }} {{ -7//2 }} {{ -7 % 3 }} {{ 2**10 }} {{ 2**-1 }} {{ 7.5 // 2 }} {{ 1e15 }} {{ 0.0001 }} {{ -0.0 }} {{ 123456789.123 }}", {}),
 ("{{ [1, 'a', none, true, {'k': 1.5}] }} {{ {'a': [1]}|string }} {{ (1,) }} {{ (1,2) }} {{ none }} {{ true }} {{ () }} {{ {'a': \"it's\"} }} {{ ['\\n', '\u00e9'] }}", {}),
 ("{{ [1,2] + [3] }} {{ 'ab' * 3 }} {{ [1]*2 }} {{ 3 * 'x' }} {{ 'x' ~ none ~ 1.0 ~ true ~ [1] ~ x }}", {}),
 ("{{ '%s-%d' % ('a', 3) }} {{ '%5.2f|%-4d|%r|%x' % (3.14159, 7, 'a', 255) }} {{ '%s' % 'solo' }} {{ '%(a)s!' % {'a': 1} }} {{ '%d%%' % 50 }}", {}),
 ("{{ 1 if true }}|{{ 1 if false }}|{{ 1 if false else 2 }}|{{ 0 and 1 }}|{{ '' or 'x' }}|{{ 1 and 2 }}|{{ none or [] }}|{{ not 0 }}|{{ not x }}", {}),
 ("{{ 1 < 2 < 3 }}{{ 3 > 2 > 2 }}{{ 1 == 1.0 }}{{ true == 1 }}{{ 'a' in 'cat' }}{{ 2 in [1,2] }}{{ 'k' in {'k':1} }}{{ 'z' not in 'abc' }}{{ 1 in x }}{{ [1,2] == [1,2] }}{{ (1,2) == [1,2] }}", {}),
 ("{{ -1 // 2 }}{{ -1 % 2 }}{{ 5 % -3 }}{{ -7.5 % 2 }}{{ 2 ** 0.5 }}{{ 10 // 3.0 }}{{ 0.1 * 3 }}{{ - 2 ** 2 }}{{ 2 ** 3 ** 2 }}{{ 1 + 2 * 3 - 4 / 2 }}", {}),
 ("{{ \"it\\'s\" }} {{ 'a\\tb\\\\n' }} {{ '\\x41\\u00e9\\U0001F600' }} {{ '\\q' }}", {}),
 ("{{ 1.0 }}{{ x }}{{ x * 2 }}{{ x + 1 }}{{ y }}{{ y / 2 }}{{ 1.5e300 * 1e300 }}{{ -1e-7 }}{{ 5e-324 }}", {"x": 1.0, "y": 3}),
]
C['Methods'] = [
 ("{{ '  x  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '\\n\\nab\\n'.lstrip('\\n') }}|{{ ' a '.rstrip() }}|{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith(('x', 'c')) }}|{{ 'a-b'.replace('-', '+') }}|{{ 'abcabc'.find('c') }}|{{ 'abcabc'.count('b') }}|{{ '{} and {}'.format(1, 'x') }}|{{ 'AbC'.upper() }}{{ 'AbC'.lower() }}", {}),
 ("{{ '  a b  '.split() }}{{ 'a,b,,c'.split(',', 1) }}{{ 'a b'.split(none, 1) }}{{ ' a  b c '.rsplit(none, 1) }}{{ 'a,b,c'.rsplit(',', 1) }}", {}),
 ("{{ 'hello world'.title() }} {{ 'aBc'.capitalize() }} {{ 'a-b c_d'.title() }} {{ \"they're 1st\".title() }}", {}),
 ("{{ d.get('a') }}|{{ d.get('zz', 5) }}|{{ d.keys()|list }}|{{ d.values()|list }}|{{ d['items'] }}|{{ d.items()|list }}", {"d": {"a": 1, "items": 7}}),
 ("{{ content.split('</think>')[-1].lstrip('\\n') }}|{{ content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') }}", {"content": "<think>\nreason\n</think>\n\nanswer"}),
 ("{{ 'a\\nb\\r\\nc'.splitlines() }}{{ 'x'.join(['a','b']) }}{{ '12'.isdigit() }}", {}),
]
C['Undefined'] = [
 ("{{ x }}|{{ x is defined }}|{{ x is undefined }}|{{ 'a' in x }}|{% for i in x %}never{% endfor %}|{{ x|list }}|{{ x|length }}|{{ not x }}", {}),
 ("{{ d.missing }}|{{ d.missing is defined }}|{{ d.a.b }}|{{ d.a is none }}", {"d": {"a": None}}),
 ("{{ tools is defined }}{{ tools is none }}{{ tools is not none }}", {"tools": None}),
 ("{{ m['tool_calls'] is defined }}{{ 'tool_calls' in m }}{{ m.tool_calls is none }}{{ not m.tool_calls }}", {"m": {"role": "assistant", "tool_calls": None}}),
 ("{{ x is iterable }}{{ none is iterable }}{{ true is number }}{{ true is integer }}{{ {} is sequence }}{{ 1.0 is float }}{{ 'a' is string }}{{ none is none }}{{ {} is mapping }}{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby 3 }}{{ 'ab' is lower }}{{ 'AB' is upper }}{{ 1 is sameas 1 }}{{ [1] is sameas [1] }}{{ 3 is in [1, 3] }}{{ 2 is gt 1 }}", {}),
]
# Integers beyond 64 bits, as json.loads gives them: every digit kept.
BIG = {"x": {"id": 123456789012345678901234567890, "neg": -98765432109876543210987,
             "u": 12345678901234567890, "f": 1.5e30, "small": 7},
       "tools": [{"name": "get", "arguments": {"id": 12345678901234567890, "n": 18446744073709551616}}]}
C['BigIntegers'] = [
 ("{{ x.id }}|{{ x.neg }}|{{ x.u }}|{{ x.f }}|{{ x | tojson }}|{{ x.id | string }}|{{ [x.id, x.neg] }}", BIG),
 ("{{ x.id is integer }}{{ x.id is number }}{{ x.id == x.id }}{{ x.id == x.u }}{{ x.id > x.u }}{{ x.neg < x.small }}{{ x.u > x.small }}{{ x.id > x.f }}{% if x.id %}T{% endif %}", BIG),
 ("{{ [x.id, x.neg, x.u, x.small] | sort }}|{{ x.id | int }}|{{ {x.u: 1} | tojson }}|{{ x.neg in [x.neg] }}", BIG),
 ("{% for t in tools %}{{ t.arguments | tojson(indent=2) }}{{ t.arguments.n }}{% endfor %}", BIG),
]

def cstr(s):
    out = '"'
    for ch in s.encode('utf-8'):
        c = chr(ch)
        if c == '"': out += '\\"'
        elif c == '\\': out += '\\\\'
        elif c == '\n': out += '\\n'
        elif c == '\r': out += '\\r'
        elif c == '\t': out += '\\t'
        elif 32 <= ch < 127: out += c
        else: out += '\\%03o' % ch
    return out + '"'

print('// Generated from Jinja2 3.1 under transformers\' settings (trim_blocks,')
print('// lstrip_blocks, loopcontrols, json.dumps tojson); each expected string is')
print('// what Jinja2 rendered. Regenerate with gen_reference_cases.py.')
print('// clang-format off')
for cat, items in C.items():
    print(f'const RenderCase k{cat}Cases[] = {{')
    for t, ctx in items:
        exp = env.from_string(t).render(**ctx)
        print(f'    {{{cstr(t)},\n     {cstr(json.dumps(ctx))},\n     {cstr(exp)}}},')
    print('};')
print('// clang-format on')
