from configparser import ConfigParser
import os, setuptools, shlex

# note: all settings are in settings.ini; edit there, not here
config = ConfigParser(delimiters=['='])
config.read('settings.ini', encoding='utf-8')
cfg = config['DEFAULT']
cfg_keys = 'version description keywords author author_email'.split()
expected = cfg_keys + "lib_name user branch license status min_python audience language".split()
for o in expected: assert o in cfg, f"missing expected setting: {o}"
setup_cfg = {o: cfg[o] for o in cfg_keys}
licenses = {'apache2': 'Apache Software License 2.0', 'mit': 'MIT License'}
statuses = ['1 - Planning', '2 - Pre-Alpha', '3 - Alpha', '4 - Beta', '5 - Production/Stable', '6 - Mature', '7 - Inactive']
py_versions = '3.10 3.11 3.12 3.13'.split()

req = lambda name: shlex.split(cfg.get(f'{name}_requirements', ''))
extras = {name: req(name) for name in ('docs', 'test', 'interop', 'fla', 'hf', 'dask')}   # settings.ini says what uses each
extras['gpu'] = extras['fla']                                                            # Triton and fla's kernels: where a GPU is
extras['dev'] = sorted(set(sum((extras[n] for n in ('docs', 'test', 'interop', 'fla')), req('dev'))))   # everything, and JupyterLab

setuptools.setup(
    name=cfg['lib_name'],
    license=licenses.get(cfg['license'].lower(), cfg['license']),
    classifiers=['Development Status :: ' + statuses[int(cfg['status'])],
                 'Intended Audience :: ' + cfg['audience'].title(),
                 'Natural Language :: ' + cfg['language'].title()]
                + ['Programming Language :: Python :: ' + o for o in py_versions[py_versions.index(cfg['min_python']):]],
    url=None if cfg['git_url'].startswith('https://github.com/example/') else cfg['git_url'],   # no placeholder URL in the metadata
    packages=setuptools.find_packages(include=[cfg['lib_path'], cfg['lib_path'] + '.*']),
    include_package_data=True,
    install_requires=shlex.split(cfg.get('requirements', '')),
    extras_require=extras,
    python_requires='>=' + cfg['min_python'],
    long_description=open('README.md', encoding='utf-8').read() if os.path.exists('README.md') else '',
    long_description_content_type='text/markdown',
    zip_safe=False,
    entry_points={'console_scripts': cfg.get('console_scripts', '').split(),
                  'nbdev': [f'{cfg["lib_path"]}={cfg["lib_path"]}._modidx:d']},
    **setup_cfg)
