(function () {
  var data = JSON.parse(document.getElementById('pp-paths').textContent);
  function select(key, scroll) {
    if (!Object.prototype.hasOwnProperty.call(data, key)) return false;
    document.querySelectorAll('tr.hot-path').forEach(function (e) { e.classList.remove('hot-path'); });
    document.querySelectorAll('li.path.selected').forEach(function (e) { e.classList.remove('selected'); });
    data[key].forEach(function (n) {
      var row = document.getElementById('L' + n);
      if (row) row.classList.add('hot-path');
    });
    var item = document.getElementById('path-' + key);
    if (item) item.classList.add('selected');
    if (scroll && data[key].length) {
      var first = document.getElementById('L' + data[key][0]);
      if (first) first.scrollIntoView({ block: 'center' });
    }
    return true;
  }
  document.querySelectorAll('li.path').forEach(function (li) {
    function go() {
      select(li.dataset.path, true);
      try { history.replaceState(null, '', '#path-' + li.dataset.path); } catch (e) {}
    }
    li.addEventListener('click', go);
    li.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); go(); }
    });
  });
  var hash = decodeURIComponent(location.hash.slice(1));
  if (!(hash.indexOf('path-') === 0 && select(hash.slice(5), true)) && PP_INITIAL !== null) {
    select(PP_INITIAL, false);
  }
})();
